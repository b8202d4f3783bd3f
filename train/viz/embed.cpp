// Cosine neighbours and the position-similarity picture (see embed.h).
#include "train/viz/embed.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "train/viz/svg.h"

namespace viz {

namespace {

double norm(const float* x, int64_t C) {
  double s = 0.0;
  for (int64_t c = 0; c < C; ++c) s += double(x[c]) * x[c];
  return std::sqrt(s);
}

// -1 → red, 0 → white, 1 → blue (a diverging scale: similarity has a sign).
std::string signed_color(double v) {
  v = std::max(-1.0, std::min(1.0, std::isfinite(v) ? v : 0.0));
  const double a = std::fabs(v);
  const int lo[3] = {255, 255, 255};
  const int hi[3] = {v < 0 ? 178 : 33, v < 0 ? 24 : 102, v < 0 ? 43 : 172};
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(lo[0] + a * (hi[0] - lo[0]))),
                static_cast<int>(std::lround(lo[1] + a * (hi[1] - lo[1]))),
                static_cast<int>(std::lround(lo[2] + a * (hi[2] - lo[2]))));
  return buf;
}

}  // namespace

std::vector<Neighbour> nearest_rows(const float* table, int64_t V, int64_t C, const double* query,
                                    int64_t k, const std::vector<int32_t>& exclude) {
  double qn = 0.0;
  for (int64_t c = 0; c < C; ++c) qn += query[c] * query[c];
  qn = std::sqrt(qn);
  std::vector<Neighbour> all;
  all.reserve(static_cast<size_t>(V));
  for (int64_t v = 0; v < V; ++v) {
    if (std::find(exclude.begin(), exclude.end(), static_cast<int32_t>(v)) != exclude.end()) continue;
    const float* row = table + v * C;
    double dot = 0.0;
    for (int64_t c = 0; c < C; ++c) dot += query[c] * row[c];
    const double rn = norm(row, C);
    all.push_back({static_cast<int32_t>(v), qn > 0 && rn > 0 ? dot / (qn * rn) : 0.0});
  }
  const size_t n = std::min(all.size(), static_cast<size_t>(std::max<int64_t>(k, 0)));
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                    [](const Neighbour& a, const Neighbour& b) {
                      return a.cosine != b.cosine ? a.cosine > b.cosine : a.id < b.id;
                    });
  all.resize(n);
  return all;
}

std::vector<double> cosine_matrix(const float* table, int64_t T, int64_t C) {
  std::vector<double> norms(static_cast<size_t>(T)), out(static_cast<size_t>(T * T));
  for (int64_t t = 0; t < T; ++t) norms[static_cast<size_t>(t)] = norm(table + t * C, C);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      double dot = 0.0;
      for (int64_t c = 0; c < C; ++c) dot += double(table[i * C + c]) * table[j * C + c];
      const double d = norms[static_cast<size_t>(i)] * norms[static_cast<size_t>(j)];
      out[static_cast<size_t>(i * T + j)] = d > 0 ? dot / d : 0.0;
    }
  return out;
}

std::string cosine_matrix_svg(const std::vector<double>& cos, int64_t T, const std::string& title) {
  const double cell = std::clamp(512.0 / static_cast<double>(T), 1.0, 24.0);
  const double side = cell * static_cast<double>(T), x0 = 60, y0 = 60;
  Svg svg(x0 + side + 120, y0 + side + 50);
  svg.text(x0, 24, title, 14, "start", "font-weight=\"bold\"");
  svg.text(x0, 44, "cosine similarity between position embeddings", 12, "start", "fill=\"#555555\"");
  std::string cells;
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      const double v = cos[static_cast<size_t>(i * T + j)];
      cells += "<rect x=\"" + fmt(x0 + j * cell, 7) + "\" y=\"" + fmt(y0 + i * cell, 7) +
               "\" width=\"" + fmt(cell, 7) + "\" height=\"" + fmt(cell, 7) + "\" fill=\"" +
               signed_color(v) + "\"><title>positions " + std::to_string(i) + ", " +
               std::to_string(j) + ": " + fmt(v, 4) + "</title></rect>\n";
    }
  svg.raw(cells);
  // Position ticks at a 1-2-5 step giving at most about eight labels.
  int64_t step = 1;
  for (int64_t s : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}) {
    step = s;
    if (T / s <= 8) break;
  }
  for (int64_t t = 0; t < T; t += step) {
    const double c = (static_cast<double>(t) + 0.5) * cell;
    svg.text(x0 - 6, y0 + c + 4, std::to_string(t), 10, "end");
    svg.text(x0 + c, y0 + side + 14, std::to_string(t), 10, "middle");
  }
  svg.text(x0 + side / 2, y0 + side + 32, "position", 11, "middle", "fill=\"#555555\"");
  const double sx = x0 + side + 24, sh = std::min(side, 200.0);
  for (int s = 0; s < 40; ++s) {
    const double v = 1.0 - 2.0 * s / 39.0;
    svg.rect(sx, y0 + sh * s / 40.0, 14, sh / 40.0 + 0.5, signed_color(v));
  }
  svg.rect(sx, y0, 14, sh, "none", "stroke=\"#888888\" stroke-width=\"0.5\"");
  svg.text(sx + 18, y0 + 8, "1", 10);
  svg.text(sx + 18, y0 + sh / 2 + 4, "0", 10);
  svg.text(sx + 18, y0 + sh, "-1", 10);
  return svg.finish();
}

}  // namespace viz
