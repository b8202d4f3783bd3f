// The --input list of prepare: files, directories, globs and "-" (standard
// input) expanded to the files they name, in a fixed order.
#pragma once

#include <string>
#include <vector>

namespace data {

// Expands each argument in order: an existing regular file is itself; a
// directory is every regular file below it (recursively, hidden names
// skipped), sorted by path; an argument that names nothing but holds * ? or [
// is a glob (glob(3), sorted; directories it matches are expanded as above);
// "-" is standard input, allowed once. A directory walk skips `skip_dir`
// (prepare's --out, whose token files would otherwise become input on a
// second run). Throws tg::DataError naming the argument when it matches
// nothing, and tg::UsageError for a second "-".
std::vector<std::string> input_expand(const std::vector<std::string>& args, const std::string& skip_dir = "");

}  // namespace data
