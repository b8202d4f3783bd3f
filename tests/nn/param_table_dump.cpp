// Prints the parameter table of a config for test_param_names.py:
//   param_table_dump vocab_size=V block_size=T n_layer=L n_head=NH n_embd=C
//                    bias=0|1 tied=0|1 pos_encoding=learned|sinusoidal|rope
//                    norm=layernorm|rmsnorm mlp=gelu|relu2|swiglu gelu=tanh|erf
// One line per tensor, "name d0 [d1]", in table order.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nn/params.h"

int main(int argc, char** argv) {
  nn::GPTConfig c;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    bool ok = true;
    if (key == "vocab_size") c.vocab_size = std::atoll(value.c_str());
    else if (key == "block_size") c.block_size = std::atoll(value.c_str());
    else if (key == "n_layer") c.n_layer = std::atoll(value.c_str());
    else if (key == "n_head") c.n_head = std::atoll(value.c_str());
    else if (key == "n_embd") c.n_embd = std::atoll(value.c_str());
    else if (key == "bias") c.bias = value == "1";
    else if (key == "tied") c.tied = value == "1";
    else {  // pos_encoding, gelu, norm, mlp (Note [Model choices] in nn/config.h)
      ok = false;
      for (const nn::ModelChoice& row : nn::model_choices())
        if (key == row.key) ok = nn::choice_parse(row, value, &c);
    }
    if (!ok) {
      std::fprintf(stderr, "param_table_dump: bad argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  const std::string err = nn::config_error(c);
  if (!err.empty()) {
    std::fprintf(stderr, "param_table_dump: %s\n", err.c_str());
    return 2;
  }
  for (const nn::ParamInfo& p : nn::param_layout(c).table) {
    std::printf("%s", p.name.c_str());
    for (int64_t d : p.shape) std::printf(" %lld", static_cast<long long>(d));
    std::printf("\n");
  }
  return 0;
}
