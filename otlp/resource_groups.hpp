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
  // The process's and the host's, merged: views of the batch's resource
  // and the spans' (copying them was 7% of the encoding's instructions).
  std::vector<const Attribute*> attributes;
  std::vector<const Span*> spans;
};

// An attribute of a span or an event, or of a group (a view): for the
// encoders, which write both alike.
inline const Attribute& attribute_of(const Attribute& a) {
  return a;
}
inline const Attribute& attribute_of(const Attribute* a) {
  return *a;
}

[[nodiscard]] std::vector<ResourceGroup> group_by_resource(const TraceBatch& batch);

// A process's resource attributes with the host's (Resource::yielding).
// Views of theirs, which must outlive the result.
[[nodiscard]] std::vector<const Attribute*> merged_resource(const Resource* host,
                                                            const std::vector<Attribute>* process);

}  // namespace trace2d::otlp
