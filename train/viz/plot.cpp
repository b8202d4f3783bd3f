// metrics.jsonl reading and the loss/learning-rate SVG (see plot.h).
#include "train/viz/plot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "train/viz/svg.h"

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
                     const Axis& ay) {
  std::string pts;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!std::isfinite(xs[i]) || !std::isfinite(ys[i])) continue;
    pts += fmt(ax(xs[i]), 6) + "," + fmt(ay(ys[i]), 6) + " ";
  }
  return pts;
}

// A run's x values on a panel for its training rows and its evaluations.
struct Xs {
  std::vector<double> train, val;
};

std::vector<double> scaled(const std::vector<double>& v, double factor) {
  std::vector<double> out;
  out.reserve(v.size());
  for (double x : v) out.push_back(x * factor);
  return out;
}

Xs xs_of(const RunCurves& r, PlotAxis axis) {
  switch (axis) {
    case PlotAxis::Step: return {r.step, r.val_step};
    case PlotAxis::TrainSeconds: return {r.train_s, r.val_train_s};
    case PlotAxis::WallMinutes: return {scaled(r.elapsed_s, 1.0 / 60), scaled(r.val_elapsed_s, 1.0 / 60)};
    case PlotAxis::Tokens: return {scaled(r.step, r.tokens_per_step), scaled(r.val_step, r.tokens_per_step)};
  }
  return {};
}

bool any_finite(const std::vector<double>& a, const std::vector<double>& b) {
  for (const std::vector<double>* v : {&a, &b})
    for (double t : *v)
      if (std::isfinite(t)) return true;
  return false;
}

// Whether the run has anything to draw on that panel.
bool on_panel(const RunCurves& r, PlotAxis axis) {
  switch (axis) {
    case PlotAxis::Step: return true;
    case PlotAxis::Tokens: return r.tokens_per_step > 0;
    case PlotAxis::TrainSeconds: return any_finite(r.train_s, r.val_train_s);
    case PlotAxis::WallMinutes: return any_finite(r.elapsed_s, r.val_elapsed_s);
  }
  return false;
}

// Axis labels: "90s", "12m", "1.5h" would hide the scale; one unit per axis.
std::string seconds_label(double v) { return fmt(v, 4) + "s"; }
std::string minutes_label(double v) { return fmt(v, 4) + "m"; }

std::string tick_label(PlotAxis axis, double v) {
  switch (axis) {
    case PlotAxis::TrainSeconds: return seconds_label(v);
    case PlotAxis::WallMinutes: return minutes_label(v);
    default: return short_count(v);
  }
}

// What a validation dot's tooltip adds after the step: its time, if logged.
std::string when_label(const RunCurves& r, size_t v, PlotAxis axis) {
  if (axis == PlotAxis::WallMinutes && std::isfinite(r.val_elapsed_s[v]))
    return " (" + minutes_label(r.val_elapsed_s[v] / 60) + " wall)";
  if (std::isfinite(r.val_train_s[v])) return " (" + seconds_label(r.val_train_s[v]) + ")";
  return "";
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
  struct TrainRow {
    double loss, lr, train_s, elapsed_s;
  };
  struct ValRow {
    double val_loss, train_s, elapsed_s;
  };
  std::map<int64_t, TrainRow> train;
  std::map<int64_t, ValRow> val;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      throw tg::DataError(path + " line " + std::to_string(n) + " is not JSON; is this a metrics.jsonl?");
    }
    // A record about the run rather than a step (--budget's plan and its
    // revisions) has neither loss: nothing to draw.
    const bool has_loss = j.is_object() && (j.contains("loss") || j.contains("val_loss"));
    if (j.is_object() && !j.contains("step") && !has_loss) continue;
    if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer())
      throw tg::DataError(path + " line " + std::to_string(n) + " has no integer \"step\"; is this a metrics.jsonl?");
    const int64_t step = j["step"].get<int64_t>();
    if (j.contains("val_loss")) val[step] = {number(j, "val_loss"), number(j, "train_s"), number(j, "elapsed_s")};
    if (j.contains("loss"))
      train[step] = {number(j, "loss"), number(j, "lr"), number(j, "train_s"), number(j, "elapsed_s")};
  }
  RunCurves rc;
  rc.name = name;
  for (const auto& [s, v] : train) {
    rc.step.push_back(static_cast<double>(s));
    rc.loss.push_back(v.loss);
    rc.lr.push_back(v.lr);
    rc.train_s.push_back(v.train_s);
    rc.elapsed_s.push_back(v.elapsed_s);
  }
  for (const auto& [s, v] : val) {
    rc.val_step.push_back(static_cast<double>(s));
    rc.val_loss.push_back(v.val_loss);
    rc.val_train_s.push_back(v.train_s);
    rc.val_elapsed_s.push_back(v.elapsed_s);
  }
  if (rc.step.empty() && rc.val_step.empty())
    throw tg::DataError(path + " holds no training or validation records yet");
  return rc;
}

std::vector<PlotAxis> default_plot_axes() {
  return {PlotAxis::Step, PlotAxis::Tokens, PlotAxis::TrainSeconds};
}

std::string loss_plot_svg(const std::vector<RunCurves>& runs, const std::vector<PlotAxis>& axes) {
  TG_CHECK(!axes.empty());
  const double panel_w = 380, panel_h = 280, top = 50, left0 = 70, gap = 500;
  const double W = left0 + gap * static_cast<double>(axes.size() - 1) + panel_w + 70;
  const double legend_y = top + panel_h + 60;
  Svg svg(W, legend_y + 22.0 * static_cast<double>(runs.size()) + 30);

  double lmin = INFINITY, lmax = -INFINITY, lrmax = 0;
  for (const RunCurves& r : runs) {
    for (const std::vector<double>* v : {&r.loss, &r.val_loss})
      for (double x : *v)
        if (std::isfinite(x)) lmin = std::min(lmin, x), lmax = std::max(lmax, x);
    for (double x : r.lr)
      if (std::isfinite(x)) lrmax = std::max(lrmax, x);
  }
  if (!std::isfinite(lmin)) lmin = 0, lmax = 1;
  const std::vector<double> lticks = nice_ticks(lmin, lmax);
  const Axis ay{lticks.front(), lticks.back() > lticks.front() ? lticks.back() : lticks.front() + 1,
                top + panel_h, top};
  const std::vector<double> rticks = nice_ticks(0, lrmax > 0 ? lrmax : 1);
  const Axis ar{0, rticks.back(), top + panel_h, top};

  struct Panel {
    PlotAxis axis;
    const char* title;
    const char* x_label;
    const char* unknown;  // shown when no run has this axis
  };
  const Panel panels[] = {
      {PlotAxis::Step, "loss against step", "step", ""},
      {PlotAxis::Tokens, "loss against tokens seen", "tokens seen", "tokens seen unknown (no ckpt.h5 in the run)"},
      {PlotAxis::TrainSeconds, "loss against training time", "training seconds (evaluation and saving excluded)",
       "training time unknown (metrics.jsonl without train_s)"},
      {PlotAxis::WallMinutes, "loss against wall time", "wall minutes since the command started (elapsed_s)",
       "wall time unknown (metrics.jsonl without elapsed_s)"},
  };
  for (size_t k = 0; k < axes.size(); ++k) {
    const Panel& panel = *std::find_if(std::begin(panels), std::end(panels),
                                       [&](const Panel& p) { return p.axis == axes[k]; });
    const double x0 = left0 + gap * static_cast<double>(k);
    double xmax = panel.axis == PlotAxis::Step ? 1.0 : 0.0;
    for (const RunCurves& r : runs) {
      if (!on_panel(r, panel.axis)) continue;
      const Xs x = xs_of(r, panel.axis);
      for (const std::vector<double>* v : {&x.train, &x.val})
        for (double t : *v)
          if (std::isfinite(t)) xmax = std::max(xmax, t);
    }
    svg.text(x0 + panel_w / 2, top - 18, panel.title, 13, "middle", "font-weight=\"bold\"");
    svg.rect(x0, top, panel_w, panel_h, "none", "stroke=\"#888888\"");
    if (!(xmax > 0)) {
      svg.text(x0 + panel_w / 2, top + panel_h / 2, panel.unknown, 12, "middle", "fill=\"#888888\"");
      continue;
    }
    const std::vector<double> xticks = nice_ticks(0, xmax);
    const Axis ax{0, xticks.back(), x0, x0 + panel_w};
    for (double t : xticks) {
      svg.line(ax(t), top, ax(t), top + panel_h, "#eeeeee");
      svg.text(ax(t), top + panel_h + 16, tick_label(panel.axis, t), 10, "middle");
    }
    svg.text(x0 + panel_w / 2, top + panel_h + 34, panel.x_label, 11, "middle", "fill=\"#555555\"");
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
      if (!on_panel(r, panel.axis)) continue;
      const Xs x = xs_of(r, panel.axis);
      const std::string color = kColors[i % (sizeof kColors / sizeof kColors[0])];
      if (lrmax > 0)
        svg.raw("<polyline class=\"lr\" fill=\"none\" stroke=\"" + color +
                "\" stroke-opacity=\"0.6\" stroke-dasharray=\"5 4\" stroke-width=\"1.2\" points=\"" +
                polyline(x.train, r.lr, ax, ar) + "\"/>\n");
      svg.raw("<polyline class=\"loss\" fill=\"none\" stroke=\"" + color +
              "\" stroke-opacity=\"0.55\" stroke-width=\"1\" points=\"" + polyline(x.train, r.loss, ax, ay) +
              "\"/>\n");
      svg.raw("<polyline class=\"val-loss\" fill=\"none\" stroke=\"" + color +
              "\" stroke-width=\"2.2\" points=\"" + polyline(x.val, r.val_loss, ax, ay) + "\"/>\n");
      for (size_t v = 0; v < r.val_step.size(); ++v)
        if (std::isfinite(r.val_loss[v]) && std::isfinite(x.val[v]))
          svg.raw("<circle cx=\"" + fmt(ax(x.val[v]), 6) + "\" cy=\"" + fmt(ay(r.val_loss[v]), 6) +
                  "\" r=\"3\" fill=\"" + color + "\"><title>" +
                  xml_escape(r.name + " step " + fmt(r.val_step[v], 10) + when_label(r, v, panel.axis) +
                             ": validation loss " + fmt(r.val_loss[v], 5)) +
                  "</title></circle>\n");
    }
  }
  const double last = left0 + gap * static_cast<double>(axes.size() - 1);
  svg.text(last + panel_w + 48, top + panel_h / 2, "learning rate (dashed)", 11, "middle",
           "fill=\"#777777\" transform=\"rotate(90 " + fmt(last + panel_w + 48, 6) + " " +
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
