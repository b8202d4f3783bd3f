// TG_CHECK: an always-on check of an internal invariant (never of user input:
// user mistakes get an error message that names the thing and the fix).
#pragma once

#include <cstdio>
#include <cstdlib>

#define TG_CHECK(cond)                                                              \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "tapegpt: internal error at %s:%d: %s\n", __FILE__,      \
                   __LINE__, #cond);                                                \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
