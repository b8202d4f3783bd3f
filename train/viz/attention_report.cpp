// attention.json and the per-head SVG (see attention_report.h); the page is
// in attention_page.cpp.
#include "train/viz/attention_report.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "train/viz/svg.h"

namespace viz {

namespace {

// float as the JSON number type: nlohmann prints the shortest text that
// reads back as the same float (0.25, not 0.25000000372529), so the file
// holds the exact values at about half the size of double text.
using Json = nlohmann::basic_json<nlohmann::ordered_map, std::vector, std::string, bool,
                                  std::int64_t, std::uint64_t, float>;

// Labels longer than this many characters are cut (the JSON has them whole).
std::string short_label(const std::string& bytes) {
  const std::string v = visible_token(bytes);
  // Count UTF-8 characters, cutting at a character boundary.
  size_t chars = 0, i = 0;
  for (; i < v.size(); ++i) {
    if ((static_cast<unsigned char>(v[i]) & 0xC0) != 0x80 && ++chars > 12) break;
  }
  return i < v.size() ? v.substr(0, i) + "\xE2\x80\xA6" : v;  // …
}

// Diagonal grey hatching for the masked future, unmistakable for a white 0,
// and the vertical gradient of the colour scale (id + "-scale").
std::string defs(const std::string& id) {
  std::string d = "<defs><pattern id=\"" + id +
                  "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                  "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"" +
                  std::string(kMaskedFill) +
                  "\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#a6a6a6\" "
                  "stroke-width=\"2\"/></pattern>\n<linearGradient id=\"" + id +
                  "-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int s = 0; s <= 8; ++s)
    d += "<stop offset=\"" + fmt(s / 8.0) + "\" stop-color=\"" + prob_color(s / 8.0) + "\"/>";
  return d + "</linearGradient></defs>\n";
}

}  // namespace

std::string attention_json(const AttentionMaps& m, bool ascii_only) {
  Json j;
  j["tokens"] = Json::array();
  for (const std::string& t : m.tokens) j["tokens"].push_back(sanitize_utf8(t));
  j["token_ids"] = m.token_ids;
  j["n_layer"] = m.n_layer;
  j["n_head"] = m.n_head;
  Json layers = Json::array();
  for (int64_t l = 0; l < m.n_layer; ++l) {
    Json heads = Json::array();
    for (int64_t h = 0; h < m.n_head; ++h) {
      Json rows = Json::array();
      for (int64_t i = 0; i < m.T; ++i) {
        Json row = Json::array();
        for (int64_t k = 0; k < m.T; ++k) row.push_back(m.at(l, h, i, k));
        rows.push_back(std::move(row));
      }
      heads.push_back(std::move(rows));
    }
    layers.push_back(std::move(heads));
  }
  j["layers"] = std::move(layers);
  return j.dump(-1, ' ', ascii_only) + "\n";
}

std::string attention_head_svg(const AttentionMaps& m, int64_t layer, int64_t head) {
  const int64_t T = m.T;
  const double cell = std::clamp(600.0 / static_cast<double>(T), 4.0, 28.0);
  const double font = std::clamp(cell * 0.7, 6.0, 12.0);
  size_t longest = 1;  // characters in the longest (cut) label
  for (const std::string& t : m.tokens) {
    size_t n = 0;
    for (const char ch : short_label(t)) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    longest = std::max(longest, n);
  }
  const double label = 8.0 + 0.65 * font * static_cast<double>(longest);
  const double x0 = label + 30, y0 = label + 60;
  const double side = cell * static_cast<double>(T);
  const double width = x0 + side + 110, height = y0 + side + 50;
  Svg svg(width, height);
  const std::string pid = "masked";
  svg.raw(defs(pid));
  svg.text(x0, 24, "layer " + std::to_string(layer) + ", head " + std::to_string(head) +
                       ": attention probabilities (rows: queries, columns: keys)",
           14, "start", "font-weight=\"bold\"");
  svg.text(x0 + side / 2, y0 - label - 6, "key (attended to)", 11, "middle", "fill=\"#555555\"");
  svg.text(16, y0 + side / 2, "query", 11, "middle",
           "fill=\"#555555\" transform=\"rotate(-90 16 " + fmt(y0 + side / 2, 7) + ")\"");
  for (int64_t i = 0; i < T; ++i) {
    const std::string lab = short_label(m.tokens[static_cast<size_t>(i)]);
    const double c = (static_cast<double>(i) + 0.5) * cell;
    svg.text(x0 - 4, y0 + c + font * 0.35, lab, font, "end");
    const double tx = x0 + c + font * 0.35, ty = y0 - 4;
    svg.text(tx, ty, lab, font, "start",
             "transform=\"rotate(-90 " + fmt(tx, 7) + " " + fmt(ty, 7) + ")\"");
  }
  std::string cells;
  for (int64_t i = 0; i < T; ++i)
    for (int64_t k = 0; k < T; ++k) {
      const double x = x0 + static_cast<double>(k) * cell, y = y0 + static_cast<double>(i) * cell;
      const std::string pos = "x=\"" + fmt(x, 7) + "\" y=\"" + fmt(y, 7) + "\" width=\"" +
                              fmt(cell, 7) + "\" height=\"" + fmt(cell, 7) + "\"";
      if (k > i) {
        cells += "<rect class=\"masked\" " + pos + " fill=\"url(#" + pid + ")\"/>\n";
        continue;
      }
      const float p = m.at(layer, head, i, k);
      cells += "<rect class=\"cell\" " + pos + " fill=\"" + prob_color(p) + "\"><title>" +
               xml_escape(visible_token(m.tokens[static_cast<size_t>(i)]) + " \xE2\x86\x92 " +
                          visible_token(m.tokens[static_cast<size_t>(k)]) + ": " +
                          fmt(p, 6)) +
               "</title></rect>\n";
    }
  svg.raw(cells);
  svg.rect(x0, y0, side, side, "none", "stroke=\"#888888\" stroke-width=\"0.5\"");
  // Colour scale: 0 at the bottom, 1 at the top, and the masked swatch.
  const double sx = x0 + side + 24, sh = std::min(side, 240.0);
  svg.rect(sx, y0, 16, sh, "url(#" + pid + "-scale)", "stroke=\"#888888\" stroke-width=\"0.5\"");
  for (int s = 0; s <= 4; ++s) {
    const double y = y0 + sh * (1.0 - s / 4.0);
    svg.line(sx + 16, y, sx + 20, y, "#555555");
    svg.text(sx + 23, y + 4, fmt(s / 4.0), 11);
  }
  svg.rect(sx, y0 + sh + 14, 16, 16, "url(#" + pid + ")", "stroke=\"#888888\" stroke-width=\"0.5\"");
  svg.text(sx + 20, y0 + sh + 26, "masked", 11);
  return svg.finish();
}

}  // namespace viz
