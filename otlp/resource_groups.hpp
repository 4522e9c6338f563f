#pragma once
// A request's spans grouped by resource, for the encoders: trace2receiver
// sends one resource per process, so a request holds one ResourceSpans per
// process resource among its spans (Span::resource), in the order each
// first comes, each with its spans in their order; spans without one go
// under the host's resource alone.

#include <vector>

#include "otlp/span.hpp"

namespace trace2d::otlp {

struct ResourceGroup {
  std::vector<Attribute> attributes;  // the process's and the host's, merged
  std::vector<const Span*> spans;
};

[[nodiscard]] std::vector<ResourceGroup> group_by_resource(const TraceBatch& batch);

// A process's resource attributes with the host's (Resource::yielding).
[[nodiscard]] std::vector<Attribute> merged_resource(const Resource* host, const std::vector<Attribute>* process);

}  // namespace trace2d::otlp
