// What `tapegpt attention` writes: attention.json (the exact numbers),
// index.html (a self-contained page showing every head) and one SVG per
// requested head. Pure functions from the maps to file contents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace viz {

struct AttentionMaps {
  std::vector<std::string> tokens;  // each token's raw bytes
  std::vector<int32_t> token_ids;
  int64_t n_layer = 0, n_head = 0, T = 0;
  std::vector<float> probs;         // [n_layer, n_head, T, T]: rows = queries, columns = keys
  std::string title;                // e.g. the checkpoint's path, shown on the page

  float at(int64_t layer, int64_t head, int64_t query, int64_t key) const {
    return probs[static_cast<size_t>(((layer * n_head + head) * T + query) * T + key)];
  }
};

// {"tokens": [...], "token_ids": [...], "n_layer": L, "n_head": H,
//  "layers": [[[[p for key] for query] for head] for layer]} as valid UTF-8
// JSON (token bytes that are not UTF-8 become U+FFFD in "tokens"; the ids
// are exact). Numbers are the float32 values, printed so they read back
// exactly. ascii_only escapes every non-ASCII character as \uXXXX.
std::string attention_json(const AttentionMaps& maps, bool ascii_only = false);

// The page: model view (all layers × heads), the selected head large with
// token labels, a colour scale, hover readout, and the head view (lines from
// each query to the keys it attends to). No network access of any kind.
std::string attention_html(const AttentionMaps& maps);

// One head as a standalone SVG heatmap with token labels and a colour scale.
std::string attention_head_svg(const AttentionMaps& maps, int64_t layer, int64_t head);

}  // namespace viz
