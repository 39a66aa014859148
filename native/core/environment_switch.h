// environment_switch.h: the on/off settings read from environment variables (S3_CUDA_GRAPHS,
// S3_CUDA_POISON_MEMORY): one parser, so every switch accepts the same spellings and refuses others
// the same way.
#pragma once
#include <string>

namespace s3 {

// "1" or "on": true; "", "0" or "off": false (an unset variable reads as ""). Anything else throws
// std::invalid_argument("VARIABLE='value': expected 1 or on (meaning), 0 or off").
bool parse_environment_switch(const char* variable, const std::string& value, const char* meaning);

}  // namespace s3
