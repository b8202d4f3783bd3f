// metrics.jsonl reading and the loss/learning-rate SVG (see plot.h).
#include "train/plot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "autograd/base/errors.h"
#include "train/svg.h"

namespace viz {

namespace {

const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                               "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

// Finite number field, or NaN when absent / null.
double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

// "12k", "3.4M": token counts on an axis.
std::string short_count(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt(v / 1e9, 3) + "G";
  if (a >= 1e6) return fmt(v / 1e6, 3) + "M";
  if (a >= 1e3) return fmt(v / 1e3, 3) + "k";
  return fmt(v, 3);
}

struct Axis {
  double lo, hi, px0, px1;  // data range → pixel range
  double operator()(double v) const { return px0 + (v - lo) / (hi - lo) * (px1 - px0); }
};

std::string polyline(const std::vector<double>& xs, const std::vector<double>& ys, const Axis& ax,
                     const Axis& ay, double scale_x) {
  std::string pts;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!std::isfinite(ys[i])) continue;
    pts += fmt(ax(xs[i] * scale_x), 6) + "," + fmt(ay(ys[i]), 6) + " ";
  }
  return pts;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int n) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, n);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  // From the last tick at or below lo to the first at or above hi.
  const int64_t first = static_cast<int64_t>(std::floor(lo / step + 1e-9));
  const int64_t last = static_cast<int64_t>(std::ceil(hi / step - 1e-9));
  for (int64_t k = first; k <= last; ++k) ticks.push_back(static_cast<double>(k) * step);
  return ticks;
}

RunCurves read_metrics(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) throw tg::DataError("cannot read " + path + "; give a run directory written by 'tapegpt train'");
  std::map<int64_t, std::pair<double, double>> train;  // step → (loss, lr)
  std::map<int64_t, double> val;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      throw tg::DataError(path + " line " + std::to_string(n) + " is not JSON; is this a metrics.jsonl?");
    }
    if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer())
      throw tg::DataError(path + " line " + std::to_string(n) + " has no integer \"step\"; is this a metrics.jsonl?");
    const int64_t step = j["step"].get<int64_t>();
    if (j.contains("val_loss")) val[step] = number(j, "val_loss");
    if (j.contains("loss")) train[step] = {number(j, "loss"), number(j, "lr")};
  }
  RunCurves rc;
  rc.name = name;
  for (const auto& [s, v] : train) {
    rc.step.push_back(static_cast<double>(s));
    rc.loss.push_back(v.first);
    rc.lr.push_back(v.second);
  }
  for (const auto& [s, v] : val) {
    rc.val_step.push_back(static_cast<double>(s));
    rc.val_loss.push_back(v);
  }
  if (rc.step.empty() && rc.val_step.empty())
    throw tg::DataError(path + " holds no training or validation records yet");
  return rc;
}

std::string loss_plot_svg(const std::vector<RunCurves>& runs) {
  const double W = 1040, panel_w = 380, panel_h = 280, top = 50, left0 = 70, left1 = 570;
  const double legend_y = top + panel_h + 60;
  Svg svg(W, legend_y + 22.0 * static_cast<double>(runs.size()) + 30);

  double lmin = INFINITY, lmax = -INFINITY, lrmax = 0, smax = 1, tmax = 0;
  for (const RunCurves& r : runs) {
    for (const std::vector<double>* v : {&r.loss, &r.val_loss})
      for (double x : *v)
        if (std::isfinite(x)) lmin = std::min(lmin, x), lmax = std::max(lmax, x);
    for (double x : r.lr)
      if (std::isfinite(x)) lrmax = std::max(lrmax, x);
    for (const std::vector<double>* v : {&r.step, &r.val_step})
      for (double s : *v) {
        smax = std::max(smax, s);
        tmax = std::max(tmax, s * r.tokens_per_step);
      }
  }
  if (!std::isfinite(lmin)) lmin = 0, lmax = 1;
  const std::vector<double> lticks = nice_ticks(lmin, lmax);
  const Axis ay{lticks.front(), lticks.back() > lticks.front() ? lticks.back() : lticks.front() + 1,
                top + panel_h, top};
  const std::vector<double> rticks = nice_ticks(0, lrmax > 0 ? lrmax : 1);
  const Axis ar{0, rticks.back(), top + panel_h, top};

  for (int panel = 0; panel < 2; ++panel) {
    const bool tokens = panel == 1;
    const double x0 = tokens ? left1 : left0;
    const double xmax = tokens ? tmax : smax;
    svg.text(x0 + panel_w / 2, top - 18, tokens ? "loss against tokens seen" : "loss against step", 13,
             "middle", "font-weight=\"bold\"");
    svg.rect(x0, top, panel_w, panel_h, "none", "stroke=\"#888888\"");
    if (tokens && !(tmax > 0)) {
      svg.text(x0 + panel_w / 2, top + panel_h / 2, "tokens seen unknown (no ckpt.h5 in the run)", 12,
               "middle", "fill=\"#888888\"");
      continue;
    }
    const std::vector<double> xticks = nice_ticks(0, xmax);
    const Axis ax{0, xticks.back(), x0, x0 + panel_w};
    for (double t : xticks) {
      svg.line(ax(t), top, ax(t), top + panel_h, "#eeeeee");
      svg.text(ax(t), top + panel_h + 16, tokens ? short_count(t) : short_count(t), 10, "middle");
    }
    svg.text(x0 + panel_w / 2, top + panel_h + 34, tokens ? "tokens seen" : "step", 11, "middle",
             "fill=\"#555555\"");
    for (double t : lticks) {
      svg.line(x0, ay(t), x0 + panel_w, ay(t), "#eeeeee");
      svg.text(x0 - 5, ay(t) + 4, fmt(t, 4), 10, "end");
    }
    if (lrmax > 0)
      for (double t : rticks) svg.text(x0 + panel_w + 5, ar(t) + 4, fmt(t, 3), 10, "start", "fill=\"#777777\"");
    svg.text(x0 - 46, top + panel_h / 2, "loss (nats/token)", 11, "middle",
             "fill=\"#555555\" transform=\"rotate(-90 " + fmt(x0 - 46, 6) + " " + fmt(top + panel_h / 2, 6) + ")\"");
    for (size_t i = 0; i < runs.size(); ++i) {
      const RunCurves& r = runs[i];
      if (tokens && !(r.tokens_per_step > 0)) continue;
      const double sx = tokens ? r.tokens_per_step : 1.0;
      const std::string color = kColors[i % (sizeof kColors / sizeof kColors[0])];
      if (lrmax > 0)
        svg.raw("<polyline class=\"lr\" fill=\"none\" stroke=\"" + color +
                "\" stroke-opacity=\"0.6\" stroke-dasharray=\"5 4\" stroke-width=\"1.2\" points=\"" +
                polyline(r.step, r.lr, ax, ar, sx) + "\"/>\n");
      svg.raw("<polyline class=\"loss\" fill=\"none\" stroke=\"" + color +
              "\" stroke-opacity=\"0.55\" stroke-width=\"1\" points=\"" + polyline(r.step, r.loss, ax, ay, sx) +
              "\"/>\n");
      svg.raw("<polyline class=\"val-loss\" fill=\"none\" stroke=\"" + color +
              "\" stroke-width=\"2.2\" points=\"" + polyline(r.val_step, r.val_loss, ax, ay, sx) + "\"/>\n");
      for (size_t k = 0; k < r.val_step.size(); ++k)
        if (std::isfinite(r.val_loss[k]))
          svg.raw("<circle cx=\"" + fmt(ax(r.val_step[k] * sx), 6) + "\" cy=\"" + fmt(ay(r.val_loss[k]), 6) +
                  "\" r=\"3\" fill=\"" + color + "\"><title>" +
                  xml_escape(r.name + " step " + fmt(r.val_step[k], 10) + ": validation loss " +
                             fmt(r.val_loss[k], 5)) +
                  "</title></circle>\n");
    }
  }
  svg.text(left1 + panel_w + 48, top + panel_h / 2, "learning rate (dashed)", 11, "middle",
           "fill=\"#777777\" transform=\"rotate(90 " + fmt(left1 + panel_w + 48, 6) + " " +
               fmt(top + panel_h / 2, 6) + ")\"");
  // Legend: one line per run, then what the line styles mean.
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    const double y = legend_y + 22.0 * static_cast<double>(i);
    svg.rect(left0, y - 10, 14, 14, color);
    svg.text(left0 + 22, y + 2, runs[i].name, 12);
  }
  svg.text(left0, legend_y + 22.0 * static_cast<double>(runs.size()) + 6,
           "thin: training loss per step; thick with dots: validation loss; dashed: learning rate (right axis)",
           11, "start", "fill=\"#555555\"");
  return svg.finish();
}

}  // namespace viz
