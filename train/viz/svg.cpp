// SVG writer and escaping (see svg.h).
#include "train/viz/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace viz {

namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  const uint32_t min_cp = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string xml_escape(std::string_view text) {
  const std::string clean = sanitize_utf8(text);
  std::string out;
  out.reserve(clean.size() + 16);
  for (size_t i = 0; i < clean.size(); ++i) {
    const char ch = clean[i];
    const auto c = static_cast<unsigned char>(ch);
    // U+FFFE and U+FFFF are valid UTF-8 but not XML characters.
    if (c == 0xEF && i + 2 < clean.size() && clean[i + 1] == '\xBF' &&
        (clean[i + 2] == '\xBE' || clean[i + 2] == '\xBF')) {
      out += kReplacement;
      i += 2;
      continue;
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) out += kReplacement;
        else out += ch;
    }
  }
  return out;
}

std::string visible_token(std::string_view bytes) {
  const std::string clean = sanitize_utf8(bytes);
  std::string out;
  for (const char ch : clean) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == ' ') out += "\xE2\x90\xA3";        // ␣
    else if (ch == '\n') out += "\xE2\x86\xB5";  // ↵
    else if (ch == '\t') out += "\xE2\x87\xA5";  // ⇥
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

std::string json_for_script(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (const char ch : json) {
    if (ch == '<') out += "\\u003c";
    else if (ch == '>') out += "\\u003e";
    else if (ch == '&') out += "\\u0026";
    else out += ch;
  }
  return out;
}

std::string prob_color(double p) {
  // ColorBrewer "Blues", with pure white at 0.
  static const unsigned char stops[][3] = {{255, 255, 255}, {222, 235, 247}, {198, 219, 239},
                                           {158, 202, 225}, {107, 174, 214}, {66, 146, 198},
                                           {33, 113, 181},  {8, 81, 156},    {8, 48, 107}};
  constexpr int n = sizeof stops / sizeof stops[0];
  if (!(p > 0.0)) p = 0.0;  // NaN too
  if (p > 1.0) p = 1.0;
  const double x = p * (n - 1);
  const int i = std::min(static_cast<int>(x), n - 2);
  const double f = x - i;
  char buf[8];
  int rgb[3];
  for (int k = 0; k < 3; ++k)
    rgb[k] = static_cast<int>(std::lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k])));
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return buf;
}

std::string fmt(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

Svg::Svg(double width, double height) {
  out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt(width, 8) + "\" height=\"" +
         fmt(height, 8) + "\" viewBox=\"0 0 " + fmt(width, 8) + " " + fmt(height, 8) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
         "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
}

void Svg::raw(std::string_view markup) { out_.append(markup); }

void Svg::rect(double x, double y, double w, double h, const std::string& fill,
               const std::string& extra) {
  out_ += "<rect x=\"" + fmt(x, 7) + "\" y=\"" + fmt(y, 7) + "\" width=\"" + fmt(w, 7) +
          "\" height=\"" + fmt(h, 7) + "\" fill=\"" + fill + "\"";
  if (!extra.empty()) out_ += " " + extra;
  out_ += "/>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& stroke,
               double width, const std::string& extra) {
  out_ += "<line x1=\"" + fmt(x1, 7) + "\" y1=\"" + fmt(y1, 7) + "\" x2=\"" + fmt(x2, 7) +
          "\" y2=\"" + fmt(y2, 7) + "\" stroke=\"" + stroke + "\" stroke-width=\"" +
          fmt(width, 4) + "\"";
  if (!extra.empty()) out_ += " " + extra;
  out_ += "/>\n";
}

void Svg::text(double x, double y, std::string_view text, double size, const char* anchor,
               const std::string& extra) {
  out_ += "<text x=\"" + fmt(x, 7) + "\" y=\"" + fmt(y, 7) + "\" font-size=\"" + fmt(size, 4) +
          "\" text-anchor=\"" + anchor + "\"";
  if (!extra.empty()) out_ += " " + extra;
  out_ += ">" + xml_escape(text) + "</text>\n";
}

void Svg::begin_group(std::string_view title) {
  out_ += "<g><title>" + xml_escape(title) + "</title>\n";
}

void Svg::end_group() { out_ += "</g>\n"; }

std::string Svg::finish() { return out_ + "</svg>\n"; }

}  // namespace viz
