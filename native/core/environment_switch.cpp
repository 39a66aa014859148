// The on/off parser of environment switches; see environment_switch.h.
#include "core/environment_switch.h"

#include <stdexcept>

namespace s3 {

bool parse_environment_switch(const char* variable, const std::string& value, const char* meaning) {
  if (value.empty() || value == "0" || value == "off") return false;
  if (value == "1" || value == "on") return true;
  throw std::invalid_argument(std::string(variable) + "='" + value + "': expected 1 or on (" + meaning + "), 0 or off");
}

}  // namespace s3
