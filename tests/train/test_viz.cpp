// The visualisation writers: escaping for XML, HTML and script-embedded
// JSON, attention.json's shape, the colour scale, the cosine neighbours and
// the metrics reader. (Well-formedness of whole files and the page in a
// browser: tests/train/test_attention_cli.py and test_attention_browser.py.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "autograd/base/errors.h"
#include "train/viz/attention_report.h"
#include "train/viz/embed.h"
#include "train/viz/plot.h"
#include "train/viz/svg.h"

namespace {

viz::AttentionMaps tiny_maps(std::vector<std::string> tokens) {
  viz::AttentionMaps m;
  m.tokens = std::move(tokens);
  m.T = static_cast<int64_t>(m.tokens.size());
  m.n_layer = 2;
  m.n_head = 3;
  for (int64_t i = 0; i < m.T; ++i) m.token_ids.push_back(static_cast<int32_t>(10 + i));
  m.probs.assign(static_cast<size_t>(m.n_layer * m.n_head * m.T * m.T), 0.0f);
  for (int64_t lh = 0; lh < m.n_layer * m.n_head; ++lh)
    for (int64_t i = 0; i < m.T; ++i)
      for (int64_t j = 0; j <= i; ++j)
        m.probs[static_cast<size_t>((lh * m.T + i) * m.T + j)] = 1.0f / static_cast<float>(i + 1);
  m.title = "run/\"best\" <&> \xC3\xA9";
  return m;
}

}  // namespace

TEST_CASE("xml_escape escapes markup, drops forbidden controls and repairs UTF-8", "[viz]") {
  CHECK(viz::xml_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(viz::xml_escape("</script>") == "&lt;/script&gt;");
  CHECK(viz::xml_escape("tab\there\nnew") == "tab\there\nnew");
  CHECK(viz::xml_escape(std::string("x\x01y", 3)) == "x\xEF\xBF\xBDy");
  CHECK(viz::xml_escape("a\xEF\xBF\xBF\xEF\xBF\xBE") == "a\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFF, U+FFFE
  CHECK(viz::xml_escape("caf\xC3\xA9 \xE2\x80\x94") == "caf\xC3\xA9 \xE2\x80\x94");  // é —
  CHECK(viz::sanitize_utf8("a\xC3") == "a\xEF\xBF\xBD");              // cut-off sequence
  CHECK(viz::sanitize_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  CHECK(viz::sanitize_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(viz::sanitize_utf8("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");  // 😀 stays
}

TEST_CASE("visible_token shows whitespace and control bytes", "[viz]") {
  CHECK(viz::visible_token(" the") == "\xE2\x90\xA3the");
  CHECK(viz::visible_token("\n") == "\xE2\x86\xB5");
  CHECK(viz::visible_token(std::string("\x00", 1)) == "\\x00");
  CHECK(viz::visible_token("<&>") == "<&>");  // escaping is the writer's job
}

TEST_CASE("json_for_script leaves no way to close the script element", "[viz]") {
  const std::string j = nlohmann::json({"</script><!--", "a&b"}).dump(-1, ' ', true);
  const std::string safe = viz::json_for_script(j);
  CHECK(safe.find('<') == std::string::npos);
  CHECK(safe.find('>') == std::string::npos);
  CHECK(safe.find('&') == std::string::npos);
  CHECK(nlohmann::json::parse(safe) == nlohmann::json::parse(j));  // same data
}

TEST_CASE("attention_json has the documented shape and exact values", "[viz][attention]") {
  const viz::AttentionMaps m = tiny_maps({"\"q\"", "<", "&", "\n", "\xC3\xA9", "\xE2\x80"});
  for (bool ascii : {false, true}) {
    const nlohmann::json j = nlohmann::json::parse(viz::attention_json(m, ascii));
    REQUIRE(j["tokens"].size() == 6);
    CHECK(j["tokens"][0] == "\"q\"");
    CHECK(j["tokens"][3] == "\n");
    CHECK(j["tokens"][4] == "\xC3\xA9");
    CHECK(j["tokens"][5] == "\xEF\xBF\xBD\xEF\xBF\xBD");  // half a character: replaced
    CHECK(j["token_ids"][5] == 15);
    CHECK(j["n_layer"] == 2);
    CHECK(j["n_head"] == 3);
    REQUIRE(j["layers"].size() == 2);
    REQUIRE(j["layers"][1].size() == 3);
    REQUIRE(j["layers"][1][2].size() == 6);
    REQUIRE(j["layers"][1][2][5].size() == 6);
    // Read back as float, every number is exactly the value written.
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t k = 0; k < 6; ++k)
        CHECK(j["layers"][1][2][i][k].get<float>() == m.at(1, 2, i, k));
  }
  const std::string ascii = viz::attention_json(m, true);
  for (char c : ascii) CHECK(static_cast<unsigned char>(c) < 0x80);
}

TEST_CASE("the page embeds data no token can break out of", "[viz][attention]") {
  const viz::AttentionMaps m = tiny_maps({"</script>", "<!--", "&amp;", "'", "\"", "\n"});
  const std::string page = viz::attention_html(m);
  // Exactly our two script elements open and close.
  size_t opens = 0, closes = 0;
  for (size_t p = page.find("<script"); p != std::string::npos; p = page.find("<script", p + 1)) ++opens;
  for (size_t p = page.find("</script"); p != std::string::npos; p = page.find("</script", p + 1)) ++closes;
  CHECK(opens == 2);
  CHECK(closes == 2);
  CHECK(page.find("<!--") == std::string::npos);
  CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  CHECK(page.find("https://") == std::string::npos);
  // The title is escaped where it appears.
  CHECK(page.find("run/&quot;best&quot; &lt;&amp;&gt;") != std::string::npos);
}

TEST_CASE("prob_color: white at 0, darkest at 1, clamped", "[viz]") {
  CHECK(viz::prob_color(0.0) == "#ffffff");
  CHECK(viz::prob_color(1.0) == "#08306b");
  CHECK(viz::prob_color(-1.0) == "#ffffff");
  CHECK(viz::prob_color(NAN) == "#ffffff");
  CHECK(viz::prob_color(2.0) == "#08306b");
  CHECK(viz::prob_color(0.5) != viz::prob_color(0.51));
  CHECK(std::string(viz::kMaskedFill) != viz::prob_color(0.0));
}

TEST_CASE("nearest_rows ranks by cosine and skips excluded ids", "[viz][embed]") {
  // Rows: e0, e1, -e0, (1,1)/√2, zero.
  const float table[] = {1, 0, 0, 1, -1, 0, 1, 1, 0, 0};
  const double q[] = {2, 0};
  const std::vector<viz::Neighbour> n = viz::nearest_rows(table, 5, 2, q, 3);
  REQUIRE(n.size() == 3);
  CHECK(n[0].id == 0);
  CHECK(n[0].cosine == Approx(1.0));
  CHECK(n[1].id == 3);
  CHECK(n[1].cosine == Approx(std::sqrt(0.5)));
  CHECK(n[2].id == 1);  // cosine 0, ties with the zero row broken by id
  const std::vector<viz::Neighbour> e = viz::nearest_rows(table, 5, 2, q, 10, {0, 3});
  CHECK(e.size() == 3);
  CHECK(e.back().id == 2);
  CHECK(e.back().cosine == Approx(-1.0));
  const std::vector<double> cm = viz::cosine_matrix(table, 3, 2);
  CHECK(cm[0] == Approx(1.0));
  CHECK(cm[1] == Approx(0.0));
  CHECK(cm[2] == Approx(-1.0));
}

TEST_CASE("read_metrics: later records replace earlier ones of the same step", "[viz][plot]") {
  const std::string path = "/tmp/tapegpt_test_viz_metrics.jsonl";
  {
    std::ofstream f(path);
    f << "{\"step\":1,\"loss\":4.0,\"lr\":0.001,\"grad_norm\":1}\n"
      << "{\"step\":2,\"loss\":3.5,\"lr\":0.002,\"grad_norm\":1}\n"
      << "{\"step\":2,\"val_loss\":3.6,\"elapsed_s\":1}\n"
      << "{\"step\":2,\"loss\":3.4,\"lr\":0.002,\"grad_norm\":1}\n"  // after a resume
      << "{\"step\":3,\"loss\":null,\"lr\":0.003,\"grad_norm\":null}\n";
  }
  const viz::RunCurves r = viz::read_metrics(path, "run");
  REQUIRE(r.step.size() == 3);
  CHECK(r.loss[1] == 3.4);
  CHECK(std::isnan(r.loss[2]));
  CHECK(r.lr[2] == 0.003);
  REQUIRE(r.val_loss.size() == 1);
  CHECK(r.val_loss[0] == 3.6);
  const std::string svg = viz::loss_plot_svg({r});
  CHECK(svg.find("class=\"val-loss\"") != std::string::npos);
  {
    std::ofstream f(path);
    f << "{\"step\":1,\"loss\":4.0}\nnot json\n";
  }
  CHECK_THROWS_AS(viz::read_metrics(path, "run"), tg::DataError);
  {
    std::ofstream f(path);
    f << "{\"step\":1,\"loss\":4.0}\n{\"loss\":3.0}\n";  // a loss without its step
  }
  CHECK_THROWS_AS(viz::read_metrics(path, "run"), tg::DataError);
  std::remove(path.c_str());
  CHECK_THROWS_AS(viz::read_metrics(path, "run"), tg::DataError);
}

TEST_CASE("the plot's third panel is loss against training seconds (train_s)", "[viz][plot]") {
  const std::string path = "/tmp/tapegpt_test_viz_train_s.jsonl";
  {
    std::ofstream f(path);
    f << "{\"step\":1,\"loss\":4.0,\"lr\":0.001,\"elapsed_s\":0.5,\"train_s\":0.25}\n"
      << "{\"step\":2,\"loss\":3.5,\"lr\":0.001,\"elapsed_s\":1.0,\"train_s\":0.5}\n"
      << "{\"step\":2,\"val_loss\":3.6,\"elapsed_s\":2.0,\"train_s\":0.5}\n"
      << "{\"step\":3,\"loss\":3.0,\"lr\":0.001,\"elapsed_s\":3.0,\"train_s\":0.75}\n";
  }
  const viz::RunCurves r = viz::read_metrics(path, "run");
  std::remove(path.c_str());
  REQUIRE(r.train_s.size() == 3);
  CHECK(r.train_s[2] == 0.75);
  REQUIRE(r.val_train_s.size() == 1);
  CHECK(r.val_train_s[0] == 0.5);
  const std::string svg = viz::loss_plot_svg({r});
  CHECK(svg.find("loss against training time") != std::string::npos);
  CHECK(svg.find("training time unknown") == std::string::npos);
  CHECK(svg.find("(0.5s): validation loss 3.6") != std::string::npos);  // the dot's title
  // One validation curve per panel: step, tokens (none here: no ckpt.h5) and seconds.
  size_t curves = 0;
  for (size_t at = svg.find("class=\"val-loss\""); at != std::string::npos; at = svg.find("class=\"val-loss\"", at + 1))
    ++curves;
  CHECK(curves == 2);
  // A log from before train_s: the time panel says so and draws nothing.
  viz::RunCurves old = r;
  for (double& t : old.train_s) t = NAN;
  for (double& t : old.val_train_s) t = NAN;
  const std::string old_svg = viz::loss_plot_svg({old});
  CHECK(old_svg.find("training time unknown") != std::string::npos);
}

TEST_CASE("loss against wall minutes (elapsed_s), the panels chosen", "[viz][plot]") {
  const std::string path = "/tmp/tapegpt_test_viz_minutes.jsonl";
  {
    std::ofstream f(path);
    f << "{\"budget_s\":150,\"plan\":[\"model: 4 layers\"]}\n"  // --budget's records: no step, no loss
      << "{\"step\":1,\"loss\":4.0,\"lr\":0.001,\"elapsed_s\":30,\"train_s\":0.25}\n"
      << "{\"revised_at_step\":1,\"max_steps\":2,\"budget\":\"slower than measured\"}\n"
      << "{\"step\":2,\"loss\":3.5,\"lr\":0.001,\"elapsed_s\":60,\"train_s\":0.5}\n"
      << "{\"step\":2,\"val_loss\":3.6,\"elapsed_s\":90,\"train_s\":0.5}\n";
  }
  const viz::RunCurves r = viz::read_metrics(path, "run");
  std::remove(path.c_str());
  REQUIRE(r.elapsed_s.size() == 2);
  CHECK(r.elapsed_s[1] == 60);
  REQUIRE(r.val_elapsed_s.size() == 1);
  CHECK(r.val_elapsed_s[0] == 90);
  const std::string svg = viz::loss_plot_svg({r}, {viz::PlotAxis::WallMinutes});
  CHECK(svg.find("loss against wall time") != std::string::npos);
  CHECK(svg.find("loss against step") == std::string::npos);  // only the panel asked for
  CHECK(svg.find("(1.5m wall): validation loss 3.6") != std::string::npos);  // the dot's title: 90 s
  CHECK(svg.find(">1.5m<") != std::string::npos);                            // a tick of the minutes axis
  // Panels side by side in the order given; the default is step, tokens, seconds.
  const std::string two = viz::loss_plot_svg({r}, {viz::PlotAxis::WallMinutes, viz::PlotAxis::Step});
  CHECK(two.find("loss against wall time") < two.find("loss against step"));
  CHECK(viz::default_plot_axes().size() == 3);
  // A log without elapsed_s: the panel says so and draws no curve.
  viz::RunCurves old = r;
  for (double& t : old.elapsed_s) t = NAN;
  for (double& t : old.val_elapsed_s) t = NAN;
  const std::string old_svg = viz::loss_plot_svg({old}, {viz::PlotAxis::WallMinutes});
  CHECK(old_svg.find("wall time unknown") != std::string::npos);
  CHECK(old_svg.find("class=\"val-loss\"") == std::string::npos);
}

TEST_CASE("nice_ticks covers the range with round steps", "[viz][plot]") {
  const std::vector<double> t = viz::nice_ticks(0, 1800);
  REQUIRE(t.size() >= 2);
  CHECK(t.front() == 0);
  CHECK(t.back() >= 1800);
  CHECK(t[1] - t[0] == 500);
  const std::vector<double> l = viz::nice_ticks(1.43, 4.2);
  CHECK(l.front() <= 1.43);
  CHECK(l.back() >= 4.2 - 1e-12);
  CHECK(l.size() <= 8);
}
