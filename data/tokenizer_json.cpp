// Reading and writing tokenizer.json (Note [tokenizer.json format]).
#include "data/tokenizer_json.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "autograd/base/errors.h"
#include "autograd/base/atomic_file.h"
#include "data/file_read.h"

namespace data {
namespace {

constexpr const char* kFormat = "tapegpt-tokenizer";
constexpr int64_t kVersion = 1;
constexpr int64_t kMaxFileBytes = int64_t{1} << 30;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw tg::DataError(where + ": " + what + "; rebuild it with tapegpt prepare");
}

std::string hex_of(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string tokenizer_json_dump(const TokenizerSpec& spec) {
  nlohmann::ordered_json j;  // keys in this order, for people reading the file
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["type"] = spec.type;
  j["vocab_size"] = spec.tokens.size();
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (const std::string& t : spec.tokens) tokens.push_back(hex_of(t));
  j["tokens"] = std::move(tokens);
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  for (const auto& m : spec.merges) merges.push_back({m[0], m[1]});
  j["merges"] = std::move(merges);
  if (!spec.split.empty()) j["split"] = spec.split;  // absent: byte-class (Note [BPE pre-split])
  return j.dump() + "\n";
}

TokenizerSpec tokenizer_json_parse(std::string_view text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    bad(where, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) bad(where, "not a JSON object");
  auto field = [&](const char* name) -> const nlohmann::json& {
    auto it = j.find(name);
    if (it == j.end()) bad(where, std::string("missing field \"") + name + "\"");
    return *it;
  };
  const auto& format = field("format");
  if (!format.is_string() || format.get<std::string>() != kFormat) bad(where, "not a tapegpt tokenizer file (format)");
  const auto& version = field("version");
  if (!version.is_number_integer() || version.get<int64_t>() != kVersion) {
    bad(where, "unsupported version " + version.dump() + " (this tapegpt reads " + std::to_string(kVersion) + ")");
  }
  TokenizerSpec spec;
  const auto& type = field("type");
  if (!type.is_string()) bad(where, "\"type\" is not a string");
  spec.type = type.get<std::string>();

  const auto& tokens = field("tokens");
  if (!tokens.is_array() || static_cast<int64_t>(tokens.size()) > kMaxVocabSize) bad(where, "\"tokens\" is not an array of at most 2^24 hex strings");
  spec.tokens.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (!t.is_string()) bad(where, "token " + std::to_string(i) + " is not a hex string");
    const std::string& hex = t.get_ref<const std::string&>();
    if (hex.size() % 2 != 0) bad(where, "token " + std::to_string(i) + " has an odd number of hex digits");
    std::string bytes(hex.size() / 2, '\0');
    for (size_t k = 0; k < bytes.size(); ++k) {
      const int hi = hex_digit(hex[2 * k]), lo = hex_digit(hex[2 * k + 1]);
      if (hi < 0 || lo < 0) bad(where, "token " + std::to_string(i) + " is not hex");
      bytes[k] = static_cast<char>(hi * 16 + lo);
    }
    spec.tokens.push_back(std::move(bytes));
  }

  const auto& merges = field("merges");
  if (!merges.is_array() || merges.size() > tokens.size()) bad(where, "\"merges\" is not an array of at most len(tokens) pairs");
  spec.merges.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto& m = merges[r];
    if (!m.is_array() || m.size() != 2 || !m[0].is_number_integer() || !m[1].is_number_integer()) {
      bad(where, "merge " + std::to_string(r) + " is not a pair of integers");
    }
    const int64_t left = m[0].get<int64_t>(), right = m[1].get<int64_t>();
    if (left < 0 || right < 0 || left >= kMaxVocabSize || right >= kMaxVocabSize) {
      bad(where, "merge " + std::to_string(r) + " has an id out of range");
    }
    spec.merges.push_back({static_cast<int32_t>(left), static_cast<int32_t>(right)});
  }

  // Optional: files from before it are byte-class (Note [BPE pre-split]).
  if (auto sp = j.find("split"); sp != j.end()) {
    if (!sp->is_string() || !split_parse(sp->get<std::string>(), &spec.split)) {
      bad(where, "\"split\" is " + sp->dump().substr(0, 40) + ", expected \"byte-class\" or \"gpt2\"");
    }
  }

  auto vs = j.find("vocab_size");
  if (vs != j.end() && (!vs->is_number_integer() || vs->get<int64_t>() != static_cast<int64_t>(spec.tokens.size()))) {
    bad(where, "\"vocab_size\" disagrees with the number of tokens");
  }
  return spec;
}

void tokenizer_json_write(const std::string& path, const TokenizerSpec& spec) {
  tg::atomic_write_file(path, tokenizer_json_dump(spec));
}

TokenizerSpec tokenizer_json_read(const std::string& path) {
  return tokenizer_json_parse(file_read(path, "tokenizer file", kMaxFileBytes), path);
}

Tokenizer load_tokenizer_dir(const std::string& dir) {
  const std::string path = dir + "/tokenizer.json";
  if (::access(path.c_str(), F_OK) != 0) {
    throw tg::DataError(dir + " has no tokenizer.json; run tapegpt prepare --out " + dir + " first, or fix --data");
  }
  const TokenizerSpec spec = tokenizer_json_read(path);
  try {
    return make_tokenizer(spec);
  } catch (const tg::DataError& e) {
    throw tg::DataError(path + ": " + e.what());
  }
}

}  // namespace data
