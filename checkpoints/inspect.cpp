// inspect_checkpoint: metadata plus every dataset read and checksum-verified,
// reporting damage per dataset instead of stopping at the first; and
// read_metadata, the metadata alone.
#include <cmath>
#include <new>

#include "autograd/base/errors.h"
#include "checkpoints/checkpoint.h"
#include "checkpoints/h5_read.h"
#include "checkpoints/layout.h"
#include "checkpoints/read_meta.h"
#include "checkpoints/validate.h"

namespace checkpoints {

namespace {

std::string dtype_name(const Node& ds) {
  Handle type = checked(H5Dget_type(ds.id()), H5Tclose, "cannot read the type of " + ds.path);
  const std::string bits = std::to_string(8 * H5Tget_size(type.get()));
  switch (H5Tget_class(type.get())) {
    case H5T_FLOAT: return "float" + bits;
    case H5T_INTEGER: return (H5Tget_sign(type.get()) == H5T_SGN_NONE ? "uint" : "int") + bits;
    default: return "other";
  }
}

// Reads one dataset as doubles (HDF5 converts every numeric type), verifying
// its checksum, and fills in the report. Failures land in report.error.
DatasetReport inspect_dataset(const Node& parent, const std::string& name, const LoadContext& ctx) {
  DatasetReport r;
  r.path = child_path(parent, name);
  try {
    Node ds = open_dataset(parent, name);
    r.shape = dataset_dims(ds);
    r.dtype = dtype_name(ds);
    r.checksummed = has_checksum(ds);
    // Bounded before multiplying, so hostile dimensions cannot overflow.
    const int64_t limit = ctx.max_bytes() / 8;
    int64_t numel = 1;
    for (int64_t d : r.shape) {
      if (d > 0 && numel > limit / d) numel = limit + 1;
      else numel *= d;
    }
    if (numel > limit)
      throw tg::DataError("dataset " + ds.path + " claims " + std::to_string(numel) +
                          " elements, implausible for a file of " + std::to_string(ctx.file_size) + " bytes");
    std::vector<double> values(static_cast<size_t>(numel));
    read_dataset(ds, H5T_NATIVE_DOUBLE, values.data(), ctx.checksums());
    double sum = 0;
    for (double v : values) sum += v * v;
    r.norm = std::sqrt(sum);
  } catch (const tg::DataError& e) {
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    r.error = "out of memory while reading " + r.path;
  }
  return r;
}

void inspect_tensors(const Node& group, const nn::ParamLayout& params, const LoadContext& ctx,
                     std::vector<DatasetReport>* out) {
  for (const nn::ParamInfo& p : params.table) out->push_back(inspect_dataset(group, p.name, ctx));
}

Inspection inspect_file(const std::string& path) {
  LoadContext ctx;
  Handle file = open_checkpoint_file(path, &ctx);
  Node root = open_root(file.get());
  Inspection out;
  out.format_version = ctx.format_version;
  out.meta.config = read_config(root);
  out.meta.train = read_train(root);
  const nn::ParamLayout params = nn::param_layout(out.meta.config);  // names only: no buffers
  inspect_tensors(open_group(root, layout::kModel), params, ctx, &out.datasets);
  if (has_child(root, layout::kOptimizer)) {
    Node g = open_group(root, layout::kOptimizer);
    out.meta.optimizer = read_optimizer_attrs(g);
    out.has_moments = has_child(g, layout::kMoment1) && has_child(g, layout::kMoment2);
    for (const char* moment : {layout::kMoment1, layout::kMoment2})
      if (has_child(g, moment)) inspect_tensors(open_group(g, moment), params, ctx, &out.datasets);
  }
  Node tok = open_group(root, layout::kTokenizer);
  out.meta.tokenizer.type = read_string_attr(tok, "type");
  if (has_attr(tok, "split")) out.meta.tokenizer.split = read_string_attr(tok, "split");  // shown as found
  for (const std::string name : {layout::kTokenBytes, layout::kTokenOffsets, layout::kMerges}) {
    out.datasets.push_back(inspect_dataset(tok, name, ctx));
    const DatasetReport& r = out.datasets.back();
    if (name == layout::kTokenOffsets && r.shape.size() == 1) out.n_tokens = r.shape[0] - 1;
    if (name == layout::kMerges && !r.shape.empty()) out.n_merges = r.shape[0];
  }
  return out;
}

}  // namespace

Checkpoint read_metadata(const std::string& path) {
  QuietErrors quiet;
  try {
    LoadContext ctx;
    Handle file = open_checkpoint_file(path, &ctx);
    Node root = open_root(file.get());
    Checkpoint meta;
    meta.config = read_config(root);
    meta.train = read_train(root);
    return meta;
  } catch (const tg::DataError& e) {
    throw tg::DataError("checkpoint " + path + ": " + e.what());
  }
}

Inspection inspect_checkpoint(const std::string& path) {
  QuietErrors quiet;
  try {
    return inspect_file(path);
  } catch (const tg::DataError& e) {
    throw tg::DataError("checkpoint " + path + ": " + e.what());
  } catch (const std::bad_alloc&) {
    throw tg::DataError("checkpoint " + path + ": out of memory while reading it");
  }
}

}  // namespace checkpoints
