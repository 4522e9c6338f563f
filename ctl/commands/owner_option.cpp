#include "ctl/commands/owner_option.hpp"

#include <limits>

namespace trace2d::ctl {

void add_owner_option(CLI::App& app, std::optional<std::int64_t>& uid) {
  app.add_option("--uid", uid,
                 "Whose tree, under a SID prefix several users' sessions are under (-1: imported sessions, which "
                 "have no uid); a tree is one user's")
      ->check(CLI::Range(std::int64_t{-1}, std::numeric_limits<std::int64_t>::max()));
}

model::LoadOptions load_options_for(const std::optional<std::int64_t>& uid) {
  model::LoadOptions options;
  if (uid) {
    options.owner = model::Owner{*uid == -1 ? std::nullopt : uid};
  }
  return options;
}

}  // namespace trace2d::ctl
