// A small SVG writer and the text escaping every output format of the
// visualisation commands needs (attention, embed --positions, plot).
//
// Note [Our own SVG writer]: the pictures are rectangles, lines, polylines and
// text, a few dozen lines of string building. Debian's plotting libraries
// (cairo, plplot, gnuplot) would add a large dependency, or a program to
// shell out to, for that, and would still leave the escaping of token text
// and the hover titles to us. Escaping is the part that must be right, so it
// lives here, in one place, with its own tests (tests/train/test_viz.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace viz {

// Valid UTF-8 for any bytes: each byte of an invalid or truncated sequence
// becomes U+FFFD (a token of a byte-level tokenizer may hold half a
// character).
std::string sanitize_utf8(std::string_view bytes);

// Text for XML/HTML content and attribute values: & < > " ' escaped, the
// characters XML 1.0 forbids (controls below 0x20 except tab, newline and
// carriage return, DEL, U+FFFE, U+FFFF) replaced by U+FFFD, invalid UTF-8
// sanitised.
std::string xml_escape(std::string_view text);

// A token as a label a reader can see: space as ␣, newline as ↵, tab as ⇥,
// other control bytes as \xNN, invalid UTF-8 as U+FFFD. Not escaped.
std::string visible_token(std::string_view bytes);

// JSON text made safe to sit inside an HTML <script> element: <, > and &
// become \u003c, \u003e, \u0026 (legal escapes within JSON strings, and they
// occur nowhere else in JSON), so "</script>" or "<!--" in a token cannot end
// or confuse the element. The input must be JSON with only ASCII (U+2028 and
// U+2029, which older JavaScript treats as line ends, are then escaped too).
std::string json_for_script(std::string_view ascii_json);

// "#rrggbb" for a probability in [0, 1]: white at 0 through blue to a dark
// navy at 1, so a zero weight is white and the masked future (drawn with
// kMaskedFill) is clearly something else.
std::string prob_color(double p);
inline constexpr const char* kMaskedFill = "#d9d9d9";

// Short number text: up to `digits` significant digits, no trailing zeros.
std::string fmt(double v, int digits = 4);

// An SVG document built as a string. Coordinates are user units (pixels).
class Svg {
 public:
  Svg(double width, double height);
  // Raw markup (already escaped) inside the <svg> element.
  void raw(std::string_view markup);
  void rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& extra = "");
  void line(double x1, double y1, double x2, double y2, const std::string& stroke,
            double width = 1.0, const std::string& extra = "");
  // text is plain UTF-8 (it is escaped here); anchor: start, middle or end.
  void text(double x, double y, std::string_view text, double size = 12,
            const char* anchor = "start", const std::string& extra = "");
  // Starts a <g> with a <title> (a hover tooltip in browsers); end with end_group.
  void begin_group(std::string_view title);
  void end_group();
  std::string finish();  // the complete document

 private:
  std::string out_;
};

}  // namespace viz
