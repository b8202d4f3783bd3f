// The names in a tapegpt checkpoint file, shared by the writer and the reader
// so the two cannot drift apart. checkpoints/README.md describes the layout.
#pragma once

#include <cstdint>

namespace checkpoints::layout {

constexpr const char* kFormat = "tapegpt";

// Groups under the root.
constexpr const char* kConfig = "config";
constexpr const char* kModel = "model";
constexpr const char* kOptimizer = "optimizer";
constexpr const char* kMoment1 = "m";          // /optimizer/m/<name>
constexpr const char* kMoment2 = "v";          // /optimizer/v/<name>
constexpr const char* kTrain = "train";
constexpr const char* kFlags = "flags";        // /train/flags
constexpr const char* kTokenizer = "tokenizer";

// Datasets of /tokenizer: token i is token_bytes[token_offsets[i] :
// token_offsets[i + 1]], so any byte (NUL included) survives.
constexpr const char* kTokenBytes = "token_bytes";      // uint8 [total bytes]
constexpr const char* kTokenOffsets = "token_offsets";  // int64 [n_tokens + 1]
constexpr const char* kMerges = "merges";               // int32 [M, 2]

// A file claims a model size in /config before we allocate anything for it.
// Our writer stores raw float32, so the parameters alone nearly fill the file;
// other writers may compress (weights compress poorly, but zeros well), so we
// allow this much inflation before calling a claim implausible. It bounds
// what a tiny hostile file can make us allocate.
constexpr int64_t kMaxInflation = 16;

}  // namespace checkpoints::layout
