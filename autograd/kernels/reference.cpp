// Naive double-precision reference kernels (see reference.h).
#include "autograd/kernels/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/kernels/dropout_mask.h"

namespace kernels::reference {

void linear_forward(double* out, const double* inp, const double* weight, const double* bias,
                    int64_t N, int64_t IC, int64_t OC) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < OC; ++o) {
      double acc = bias ? bias[o] : 0.0;
      for (int64_t i = 0; i < IC; ++i) acc += inp[n * IC + i] * weight[o * IC + i];
      out[n * OC + o] = acc;
    }
}

void linear_backward(double* dinp, double* dweight, double* dbias, const double* dout,
                     const double* inp, const double* weight, int64_t N, int64_t IC, int64_t OC) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < OC; ++o) {
      const double d = dout[n * OC + o];
      if (dbias) dbias[o] += d;
      for (int64_t i = 0; i < IC; ++i) {
        if (dinp) dinp[n * IC + i] += d * weight[o * IC + i];
        if (dweight) dweight[o * IC + i] += d * inp[n * IC + i];
      }
    }
}

double round_to_bf16(double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  int e;
  std::frexp(x, &e);  // |x| in [2^(e-1), 2^e): 8 significant bits leave a spacing of 2^(e-8)
  const double spacing = std::ldexp(1.0, std::max(e, -125) - 8);
  const double r = std::nearbyint(x / spacing) * spacing;
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
  return std::fabs(r) > largest ? std::copysign(std::numeric_limits<double>::infinity(), x) : r;
}

namespace {
std::vector<double> rounded_to_bf16(const double* x, int64_t n) {
  std::vector<double> r(x, x + n);
  for (double& v : r) v = round_to_bf16(v);
  return r;
}
}  // namespace

void linear_forward_bf16(double* out, const double* inp, const double* weight, const double* bias,
                         int64_t N, int64_t IC, int64_t OC) {
  const std::vector<double> x = rounded_to_bf16(inp, N * IC), w = rounded_to_bf16(weight, OC * IC);
  linear_forward(out, x.data(), w.data(), bias, N, IC, OC);
}

void linear_backward_bf16(double* dinp, double* dweight, const double* dout, const double* inp,
                          const double* weight, int64_t N, int64_t IC, int64_t OC) {
  const std::vector<double> d = rounded_to_bf16(dout, N * OC), x = rounded_to_bf16(inp, N * IC),
                            w = rounded_to_bf16(weight, OC * IC);
  linear_backward(dinp, dweight, nullptr, d.data(), x.data(), w.data(), N, IC, OC);
}

void embedding_forward(double* out, const int32_t* ids, const double* wte, const double* wpe,
                       int64_t B, int64_t T, int64_t C) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c)
        out[(b * T + t) * C + c] = wte[ids[b * T + t] * C + c] + wpe[t * C + c];
}

void embedding_backward(double* dwte, double* dwpe, const double* dout, const int32_t* ids,
                        int64_t B, int64_t T, int64_t C) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) {
        const double d = dout[(b * T + t) * C + c];
        if (dwte) dwte[ids[b * T + t] * C + c] += d;
        if (dwpe) dwpe[t * C + c] += d;
      }
}

void layernorm_forward(double* out, double* mean, double* rstd, const double* inp,
                       const double* weight, const double* bias, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const double* x = inp + n * C;
    double m = 0.0, var = 0.0;
    for (int64_t c = 0; c < C; ++c) m += x[c];
    m /= C;
    for (int64_t c = 0; c < C; ++c) var += (x[c] - m) * (x[c] - m);
    var /= C;
    const double s = 1.0 / std::sqrt(var + 1e-5);
    for (int64_t c = 0; c < C; ++c)
      out[n * C + c] = (x[c] - m) * s * weight[c] + (bias ? bias[c] : 0.0);
    mean[n] = m;
    rstd[n] = s;
  }
}

void layernorm_backward(double* dinp, double* dweight, double* dbias, const double* dout,
                        const double* inp, const double* weight, const double* mean,
                        const double* rstd, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const double* x = inp + n * C;
    const double* d = dout + n * C;
    double g_mean = 0.0, gx_mean = 0.0;
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = (x[c] - mean[n]) * rstd[n];
      g_mean += d[c] * weight[c];
      gx_mean += d[c] * weight[c] * xhat;
    }
    g_mean /= C;
    gx_mean /= C;
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = (x[c] - mean[n]) * rstd[n];
      if (dinp) dinp[n * C + c] += rstd[n] * (d[c] * weight[c] - g_mean - xhat * gx_mean);
      if (dweight) dweight[c] += d[c] * xhat;
      if (dbias) dbias[c] += d[c];
    }
  }
}

void gelu_forward(double* out, const double* inp, int64_t n, GeluKind kind) {
  const double k = std::sqrt(2.0 / M_PI);
  for (int64_t i = 0; i < n; ++i) {
    const double x = inp[i];
    // 0.5·x·(1 + tanh u) written as x·σ(2u) and 0.5·x·(1 + erf) as
    // 0.5·x·erfc(-x/√2): the same functions, without the cancellation in
    // 1 + tanh and 1 + erf that loses even double's digits for x ≲ -6.
    out[i] = kind == GeluKind::Erf ? 0.5 * x * std::erfc(-x / std::sqrt(2.0))
                                   : x / (1.0 + std::exp(-2.0 * k * (x + 0.044715 * x * x * x)));
  }
}

void gelu_backward(double* dinp, const double* dout, const double* inp, int64_t n, GeluKind kind) {
  const double k = std::sqrt(2.0 / M_PI);
  for (int64_t i = 0; i < n; ++i) {
    const double x = inp[i];
    if (kind == GeluKind::Erf) {
      // Φ(x) + x·φ(x)
      const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
      const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
      dinp[i] += dout[i] * (cdf + x * pdf);
      continue;
    }
    // d/dx [x·σ(2u)] = σ + x·2u'·σ·(1 - σ); σ(2u) = ½(1 + tanh u).
    const double s = 1.0 / (1.0 + std::exp(-2.0 * k * (x + 0.044715 * x * x * x)));
    const double du = k * (1.0 + 3.0 * 0.044715 * x * x);
    dinp[i] += dout[i] * (s + 2.0 * x * du * s * (1.0 - s));
  }
}

void rmsnorm_forward(double* out, double* rstd, const double* inp, const double* weight,
                     int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const double* x = inp + n * C;
    double ms = 0.0;
    for (int64_t c = 0; c < C; ++c) ms += x[c] * x[c];
    ms /= C;
    const double s = 1.0 / std::sqrt(ms + 1e-5);
    for (int64_t c = 0; c < C; ++c) out[n * C + c] = x[c] * s * weight[c];
    rstd[n] = s;
  }
}

void rmsnorm_backward(double* dinp, double* dweight, const double* dout, const double* inp,
                      const double* weight, const double* rstd, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const double* x = inp + n * C;
    const double* d = dout + n * C;
    double gx_mean = 0.0;
    for (int64_t c = 0; c < C; ++c) gx_mean += d[c] * weight[c] * x[c] * rstd[n];
    gx_mean /= C;
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = x[c] * rstd[n];
      if (dinp) dinp[n * C + c] += rstd[n] * (d[c] * weight[c] - xhat * gx_mean);
      if (dweight) dweight[c] += d[c] * xhat;
    }
  }
}

// Rotates pair (x, y) = (p[i], p[i + HS/2]) of every head of q and k by
// sign·(pos0 + t)·θ_i, θ_i = 10000^(-2i/HS), adding into dst (sign -1: the
// transpose), and adds v unchanged.
static void rope_rotate_add(double* dst, const double* src, int64_t B, int64_t T, int64_t C,
                            int64_t NH, int64_t pos0, double sign) {
  const int64_t HS = C / NH;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const double* p = src + (b * T + t) * 3 * C;
      double* o = dst + (b * T + t) * 3 * C;
      for (int64_t part = 0; part < 2; ++part)  // q, k
        for (int64_t h = 0; h < NH; ++h)
          for (int64_t i = 0; i < HS / 2; ++i) {
            const int64_t ix = part * C + h * HS + i, iy = ix + HS / 2;
            const double theta = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(HS));
            const double angle = sign * static_cast<double>(pos0 + t) * theta;
            o[ix] += p[ix] * std::cos(angle) - p[iy] * std::sin(angle);
            o[iy] += p[ix] * std::sin(angle) + p[iy] * std::cos(angle);
          }
      for (int64_t c = 2 * C; c < 3 * C; ++c) o[c] += p[c];
    }
}

void rope_forward(double* out, const double* qkv, int64_t B, int64_t T, int64_t C, int64_t NH,
                  int64_t pos0) {
  for (int64_t i = 0; i < B * T * 3 * C; ++i) out[i] = 0.0;
  rope_rotate_add(out, qkv, B, T, C, NH, pos0, 1.0);
}

void rope_backward(double* dqkv, const double* dout, int64_t B, int64_t T, int64_t C, int64_t NH,
                   int64_t pos0) {
  rope_rotate_add(dqkv, dout, B, T, C, NH, pos0, -1.0);
}

void relu2_forward(double* out, const double* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = inp[i] > 0.0 ? inp[i] * inp[i] : 0.0;
}

void relu2_backward(double* dinp, const double* dout, const double* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dinp[i] += dout[i] * (inp[i] > 0.0 ? 2.0 * inp[i] : 0.0);
}

void swiglu_forward(double* out, const double* inp, int64_t N, int64_t H) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < H; ++c) {
      const double a = inp[n * 2 * H + c], b = inp[n * 2 * H + H + c];
      out[n * H + c] = a / (1.0 + std::exp(-a)) * b;
    }
}

void swiglu_backward(double* dinp, const double* dout, const double* inp, int64_t N, int64_t H) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < H; ++c) {
      const double a = inp[n * 2 * H + c], b = inp[n * 2 * H + H + c], d = dout[n * H + c];
      const double s = 1.0 / (1.0 + std::exp(-a));
      dinp[n * 2 * H + c] += d * b * s * (1.0 + a * (1.0 - s));
      dinp[n * 2 * H + H + c] += d * a * s;
    }
}

void softcap_forward(double* out, const double* inp, int64_t n, double cap) {
  for (int64_t i = 0; i < n; ++i) out[i] = cap * std::tanh(inp[i] / cap);
}

void softcap_backward(double* dinp, const double* dout, const double* inp, int64_t n, double cap) {
  for (int64_t i = 0; i < n; ++i) {
    // 1 - tanh²(u) = 1/cosh²(u): no cancellation in the tail, where 1 - t² is tiny.
    const double c = std::cosh(inp[i] / cap);
    dinp[i] += dout[i] / (c * c);
  }
}

void softmax_forward(double* probs, const double* logits, double temperature, int64_t N,
                     int64_t V) {
  for (int64_t n = 0; n < N; ++n) {
    const double* x = logits + n * V;
    double mx = x[0], sum = 0.0;
    for (int64_t j = 1; j < V; ++j) mx = x[j] > mx ? x[j] : mx;
    for (int64_t j = 0; j < V; ++j) sum += std::exp((x[j] - mx) / temperature);
    for (int64_t j = 0; j < V; ++j) probs[n * V + j] = std::exp((x[j] - mx) / temperature) / sum;
  }
}

void dropout_forward(double* out, const double* inp, double p, uint64_t seed, int64_t n) {
  const uint64_t threshold = dropout_threshold(static_cast<float>(p));
  for (int64_t i = 0; i < n; ++i)
    out[i] = dropout_keep(seed, i, threshold) ? inp[i] / (1.0 - p) : 0.0;
}

void dropout_backward(double* dinp, const double* dout, double p, uint64_t seed, int64_t n) {
  const uint64_t threshold = dropout_threshold(static_cast<float>(p));
  for (int64_t i = 0; i < n; ++i)
    if (dropout_keep(seed, i, threshold)) dinp[i] += dout[i] / (1.0 - p);
}

// M/(1-p) at (pair bh, row t, column j) (Note [Attention dropout]); 1 when p = 0.
double drop_factor(int64_t bh, int64_t t, int64_t j, int64_t T, double p, uint64_t seed) {
  if (p <= 0.0) return 1.0;
  const bool keep = dropout_keep(seed, (bh * T + t) * T + j, dropout_threshold(static_cast<float>(p)));
  return keep ? 1.0 / (1.0 - p) : 0.0;
}

void attention_forward(double* out, double* att, const double* qkv, int64_t B, int64_t T,
                       int64_t C, int64_t NH, double dropout_p, uint64_t seed) {
  const int64_t HS = C / NH;
  const double scale = 1.0 / std::sqrt(static_cast<double>(HS));
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < NH; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const double* q = qkv + (b * T + t) * 3 * C + h * HS;
        double* a = att + ((b * NH + h) * T + t) * T;
        // Scores with the future masked to -∞, then a full-row softmax:
        // exp(-∞) = 0 gives the exact zeros above the diagonal.
        double mx = neg_inf;
        for (int64_t j = 0; j < T; ++j) {
          double s = neg_inf;
          if (j <= t) {
            const double* k = qkv + (b * T + j) * 3 * C + C + h * HS;
            s = 0.0;
            for (int64_t i = 0; i < HS; ++i) s += q[i] * k[i];
            s *= scale;
          }
          a[j] = s;
          if (s > mx) mx = s;
        }
        double sum = 0.0;
        for (int64_t j = 0; j < T; ++j) {
          a[j] = std::exp(a[j] - mx);
          sum += a[j];
        }
        for (int64_t j = 0; j < T; ++j) a[j] /= sum;
        double* o = out + (b * T + t) * C + h * HS;
        for (int64_t i = 0; i < HS; ++i) {
          double acc = 0.0;
          for (int64_t j = 0; j < T; ++j)
            acc += a[j] * drop_factor(b * NH + h, t, j, T, dropout_p, seed) *
                   qkv[(b * T + j) * 3 * C + 2 * C + h * HS + i];
          o[i] = acc;
        }
      }
}

void attention_backward(double* dqkv, const double* dout, const double* qkv, const double* att,
                        int64_t B, int64_t T, int64_t C, int64_t NH, double dropout_p,
                        uint64_t seed) {
  const int64_t HS = C / NH;
  const double scale = 1.0 / std::sqrt(static_cast<double>(HS));
  std::vector<double> datt(T), dscore(T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < NH; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const double* a = att + ((b * NH + h) * T + t) * T;
        const double* d = dout + (b * T + t) * C + h * HS;
        auto qkv_at = [&](int64_t row, int64_t part) { return (b * T + row) * 3 * C + part * C + h * HS; };
        // out = Σ_j drop(att)[j]·v_j: dv_j += drop(att)[j]·dout, and the
        // gradient of att[j] is (dout·v_j)·drop'(j), drop' = M/(1-p).
        for (int64_t j = 0; j < T; ++j) {
          datt[j] = 0.0;
          const double f = drop_factor(b * NH + h, t, j, T, dropout_p, seed);
          for (int64_t i = 0; i < HS; ++i) {
            datt[j] += d[i] * qkv[qkv_at(j, 2) + i];
            dqkv[qkv_at(j, 2) + i] += a[j] * f * d[i];
          }
          datt[j] *= f;
        }
        double dot = 0.0;
        for (int64_t j = 0; j < T; ++j) dot += a[j] * datt[j];
        for (int64_t j = 0; j < T; ++j) dscore[j] = a[j] * (datt[j] - dot) * scale;
        for (int64_t j = 0; j < T; ++j)
          for (int64_t i = 0; i < HS; ++i) {
            dqkv[qkv_at(t, 0) + i] += dscore[j] * qkv[qkv_at(j, 1) + i];
            dqkv[qkv_at(j, 1) + i] += dscore[j] * qkv[qkv_at(t, 0) + i];
          }
      }
}

void crossentropy_forward(double* losses, double* probs, const double* logits,
                          const int32_t* targets, int64_t N, int64_t V) {
  for (int64_t n = 0; n < N; ++n) {
    const double* x = logits + n * V;
    double mx = x[0], sum = 0.0;
    for (int64_t j = 1; j < V; ++j) mx = x[j] > mx ? x[j] : mx;
    for (int64_t j = 0; j < V; ++j) sum += std::exp(x[j] - mx);
    for (int64_t j = 0; j < V; ++j) probs[n * V + j] = std::exp(x[j] - mx) / sum;
    losses[n] = std::log(sum) + mx - x[targets[n]];
  }
}

void crossentropy_backward(double* dlogits, const double* probs, const int32_t* targets,
                           double scale, int64_t N, int64_t V) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < V; ++j)
      dlogits[n * V + j] += scale * (probs[n * V + j] - (j == targets[n] ? 1.0 : 0.0));
}

void muon_momentum(double* x, double* m, const double* grad, int64_t rows, int64_t cols,
                   double momentum, double grad_scale) {
  const bool tall = rows > cols;
  double sum = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      const double g = grad[i] * grad_scale;
      m[i] = momentum * m[i] + g;
      const double u = g + momentum * m[i];
      x[tall ? c * rows + r : i] = u;
      sum += u * u;
    }
  const double norm = std::sqrt(sum) + static_cast<double>(kMuonEps);
  for (int64_t i = 0; i < rows * cols; ++i) x[i] /= norm;
}

void newton_schulz(double* x, int64_t R, int64_t K, int steps, double a, double b, double c) {
  std::vector<double> A(static_cast<size_t>(R * R)), B(A.size()), y(static_cast<size_t>(R * K));
  for (int s = 0; s < steps; ++s) {
    for (int64_t i = 0; i < R; ++i)  // A = x·xᵀ
      for (int64_t j = 0; j < R; ++j) {
        double acc = 0.0;
        for (int64_t k = 0; k < K; ++k) acc += x[i * K + k] * x[j * K + k];
        A[i * R + j] = acc;
      }
    for (int64_t i = 0; i < R; ++i)  // B = b·A + c·A·A
      for (int64_t j = 0; j < R; ++j) {
        double acc = 0.0;
        for (int64_t k = 0; k < R; ++k) acc += A[i * R + k] * A[k * R + j];
        B[i * R + j] = b * A[i * R + j] + c * acc;
      }
    for (int64_t i = 0; i < R; ++i)  // y = a·x + B·x
      for (int64_t j = 0; j < K; ++j) {
        double acc = 0.0;
        for (int64_t k = 0; k < R; ++k) acc += B[i * R + k] * x[k * K + j];
        y[i * K + j] = a * x[i * K + j] + acc;
      }
    for (int64_t i = 0; i < R * K; ++i) x[i] = y[i];
  }
}

void muon_apply(double* param, const double* x, int64_t rows, int64_t cols, double lr,
                double weight_decay) {
  const bool tall = rows > cols;
  const double scale = std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(cols)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      param[i] = param[i] * (1.0 - lr * weight_decay) - lr * scale * x[tall ? c * rows + r : i];
    }
}

void muon_update(double* param, double* m, const double* grad, int64_t rows, int64_t cols,
                 double lr, double momentum, double weight_decay, double grad_scale) {
  std::vector<double> x(static_cast<size_t>(rows * cols));
  muon_momentum(x.data(), m, grad, rows, cols, momentum, grad_scale);
  // The published coefficients as float32 holds them (the kernels compute
  // with those), written out here: the oracle's own copy.
  newton_schulz(x.data(), std::min(rows, cols), std::max(rows, cols), 5, static_cast<double>(3.4445f),
                static_cast<double>(-4.7750f), static_cast<double>(2.0315f));
  muon_apply(param, x.data(), rows, cols, lr, weight_decay);
}

}  // namespace kernels::reference
