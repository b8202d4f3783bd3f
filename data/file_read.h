// Reading a whole (text) file into memory, with one-line errors that name it.
#pragma once

#include <cstdint>
#include <string>

namespace data {

// The bytes of `path`. Throws tg::DataError when it is missing, unreadable,
// not a regular file, or larger than max_bytes. `what` names the file's role
// in messages ("input", "tokenizer file").
std::string file_read(const std::string& path, const std::string& what,
                      int64_t max_bytes = int64_t{1} << 40);

}  // namespace data
