#include "ctl/advice/status_settings.hpp"

namespace trace2d::ctl::advice {

Setting setting_in(const CostGroup& group, const std::map<std::string, std::string>& reported) {
  Setting setting = Setting::unknown;
  for (const RunCost& run : group.runs) {
    const auto it = reported.find(run.sid);
    if (it == reported.end() || it->second == "keep") {
      continue;
    }
    if (!is_false(it->second)) {
      return Setting::on;
    }
    setting = Setting::off;
  }
  return setting;
}

}  // namespace trace2d::ctl::advice
