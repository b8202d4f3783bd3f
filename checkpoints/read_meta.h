// Opening a checkpoint as an untrusted file and reading its metadata (all
// but the datasets), shared by load_checkpoint and inspect_checkpoint.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoints/checkpoint.h"
#include "checkpoints/h5_handle.h"

namespace checkpoints {

// What the opened file tells the readers of its datasets.
struct LoadContext {
  int64_t file_size = 0;
  int64_t format_version = 0;
  // Bytes any dataset or model may claim before we call it implausible.
  int64_t max_bytes() const;
  // format_version >= 2: every dataset holding data must carry a checksum.
  bool checksums() const { return format_version >= 2; }
};

// Steps (1) and (2) of Note [Loading untrusted files] in load.cpp: a regular
// file, the HDF5 signature and a checksummed superblock (read by us before
// HDF5 parses anything), a clean open, our format name and a version we read
// (1: no dataset checksums, 2: Fletcher32 on every dataset).
Handle open_checkpoint_file(const std::string& path, LoadContext* ctx);

// /config, validated by nn::config_error.
nn::GPTConfig read_config(const Node& root);
// /train and its flags.
TrainState read_train(const Node& root);
// The attributes of /optimizer (not the moments).
OptimizerState read_optimizer_attrs(const Node& optimizer_group);
// A non-negative integer attribute.
int64_t read_count_attr(const Node& g, const std::string& name);

}  // namespace checkpoints
