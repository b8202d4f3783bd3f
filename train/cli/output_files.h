// Where the visualisation commands (attention, embed, plot) write: checks
// made before any work, so a refused command leaves everything as it was.
#pragma once

#include <string>
#include <vector>

namespace cli {

// Creates directory `dir` (and parents) if needed. UsageError if it exists
// as something else; DataError if it cannot be created.
void make_output_dir(const std::string& dir, const std::string& flag);

// UsageError naming the first of `paths` that already exists, unless
// overwrite: nothing a user has is replaced without --overwrite.
void refuse_existing(const std::vector<std::string>& paths, bool overwrite);

}  // namespace cli
