// SIGHUP: which changed settings apply live, and copying them. Reloadability
// is a property of each setting's declaration (daemon/settings/setting.hpp),
// so the reload, --check-config and the docs read it from one place.

#include <any>
#include <vector>

#include "daemon/app/config_file.hpp"
#include "daemon/app/config_file_settings.hpp"

namespace trace2d::app {
namespace {

using config::Check;
using config::Key;
using config::Reload;

// The fields of one DaemonOptions, in the order of the list of settings.
class FieldCollector {
 public:
  template <typename T, typename... Ignored>
  void text(const Key&, const T& field, Ignored&&...) { m_fields.push_back(&field); }
  template <typename T, typename... Ignored>
  void list(const Key&, const T& field, Ignored&&...) { m_fields.push_back(&field); }
  template <typename T, typename... Ignored>
  void boolean(const Key&, const T& field, Ignored&&...) { m_fields.push_back(&field); }
  template <typename T, typename... Ignored>
  void mode(const Key&, const T& field, Ignored&&...) { m_fields.push_back(&field); }
  template <typename T, typename... Ignored>
  void integer(const Key&, const T& field, Ignored&&...) { m_fields.push_back(&field); }

  [[nodiscard]] const std::vector<std::any>& fields() const { return m_fields; }

 private:
  std::vector<std::any> m_fields;  // const T*, one per setting
};

// Walks `running` in step with the fields of `fresh`: compares every
// setting, and copies the live ones when asked to.
class LiveCopier {
 public:
  LiveCopier(const std::vector<std::any>& fresh, bool copy) : m_fresh(fresh), m_copy(copy) {}

  template <typename T, typename... Ignored>
  void text(const Key& key, T& field, Ignored&&...) { visit(key, field); }
  template <typename T, typename... Ignored>
  void list(const Key& key, T& field, Ignored&&...) { visit(key, field); }
  template <typename T, typename... Ignored>
  void boolean(const Key& key, T& field, Ignored&&...) { visit(key, field); }
  template <typename T, typename... Ignored>
  void mode(const Key& key, T& field, Ignored&&...) { visit(key, field); }
  template <typename T, typename... Ignored>
  void integer(const Key& key, T& field, Ignored&&...) { visit(key, field); }

  [[nodiscard]] ReloadPlan& plan() { return m_plan; }

 private:
  template <typename T>
  void visit(const Key& key, T& field) {
    // Same list, same order, same types: the cast cannot fail.
    const T& fresh = *std::any_cast<const T*>(m_fresh.at(m_index++));
    if (field == fresh) {
      return;
    }
    if (key.reload == Reload::live) {
      m_plan.applied.push_back(key.full());
      if (m_copy) {
        field = fresh;
      }
    } else {
      m_plan.need_restart.push_back(key.full());
    }
  }

  const std::vector<std::any>& m_fresh;
  bool m_copy;
  std::size_t m_index = 0;
  ReloadPlan m_plan;
};

ReloadPlan compare(DaemonOptions& running, const DaemonOptions& fresh, bool copy) {
  FieldCollector collector;
  config::visit_settings(fresh, collector);
  LiveCopier copier(collector.fields(), copy);
  config::visit_settings(running, copier);
  return std::move(copier.plan());
}

}  // namespace

ReloadPlan plan_reload(const DaemonOptions& running, const DaemonOptions& fresh) {
  DaemonOptions scratch = running;
  return compare(scratch, fresh, false);
}

void apply_live_settings(DaemonOptions& running, const DaemonOptions& fresh) {
  (void)compare(running, fresh, true);
}

}  // namespace trace2d::app
