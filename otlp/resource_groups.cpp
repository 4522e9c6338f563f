#include "otlp/resource_groups.hpp"

#include <algorithm>
#include <unordered_map>

namespace trace2d::otlp {
namespace {

bool has_key(const std::vector<Attribute>& attributes, std::string_view key) {
  return std::any_of(attributes.begin(), attributes.end(), [key](const Attribute& a) { return a.key == key; });
}

}  // namespace

std::vector<const Attribute*> merged_resource(const Resource* host, const std::vector<Attribute>* process) {
  std::vector<const Attribute*> out;
  const auto yields = [host](std::string_view key) {
    return std::find(host->yielding.begin(), host->yielding.end(), key) != host->yielding.end();
  };
  if (process != nullptr) {
    for (const Attribute& a : *process) {
      if (host == nullptr || !has_key(host->attributes, a.key.view()) || yields(a.key.view())) {
        out.push_back(&a);
      }
    }
  }
  if (host != nullptr) {
    for (const Attribute& a : host->attributes) {
      if (process == nullptr || !has_key(*process, a.key.view()) || !yields(a.key.view())) {
        out.push_back(&a);
      }
    }
  }
  return out;
}

std::vector<ResourceGroup> group_by_resource(const TraceBatch& batch) {
  std::vector<ResourceGroup> groups;
  std::unordered_map<const std::vector<Attribute>*, std::size_t> index;
  for (const Span& span : batch.spans) {
    const std::vector<Attribute>* process = span.resource.get();
    auto [at, added] = index.try_emplace(process, groups.size());
    if (added) {
      groups.push_back(ResourceGroup{merged_resource(batch.resource, process), {}});
    }
    groups[at->second].spans.push_back(&span);
  }
  if (groups.empty()) {
    // An empty request still names its resource, as it did.
    groups.push_back(ResourceGroup{merged_resource(batch.resource, nullptr), {}});
  }
  return groups;
}

}  // namespace trace2d::otlp
