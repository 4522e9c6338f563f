#include "ctl/advice/command_key.hpp"

namespace trace2d::ctl::advice {

std::string command_key(std::string_view alias) { return std::string(alias) + ".cmd_name"; }

}  // namespace trace2d::ctl::advice
