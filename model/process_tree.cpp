#include "model/process_tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "model/session_placement.hpp"

namespace trace2d::model {
namespace {

constexpr std::string_view k_main_thread = "main";
// Sessions no child_start claims sort after the entries of their parent
// when times are missing: git sent nothing that says when they started.
constexpr std::int64_t k_unordered_seq = std::numeric_limits<std::int64_t>::max();

std::optional<double> plus(const std::optional<double>& a, const std::optional<double>& b) {
  if (a && b) {
    return *a + *b;
  }
  return std::nullopt;
}

// Moves `inner`'s interval into `outer`'s, when both are timed. git dates
// a region's or thread's start by the wall clock (`time`, read again as its
// line is written) and times its length by the monotonic one (`t_rel`): a
// preemption between the two readings makes it seem to start late, and end
// after what holds it. Its length is the trustworthy figure, so it moves
// earlier first, and is cut only when it is longer than `outer`.
void keep_within(Node& inner, const Node& outer) {
  if (!inner.offset || !inner.elapsed || !outer.offset || !outer.elapsed ||
      !std::isfinite(*inner.offset + *inner.elapsed + *outer.offset + *outer.elapsed)) {
    return;  // untimed, or times that are no number: drawn by no one (flame_layout)
  }
  const double outer_end = *outer.offset + std::max(0.0, *outer.elapsed);
  const double length = std::max(0.0, *inner.elapsed);
  if (*inner.offset >= *outer.offset && *inner.offset + length <= outer_end) {
    return;
  }
  const double start = std::max(*outer.offset, std::min(*inner.offset, outer_end - length));
  inner.offset = start;
  inner.elapsed = std::min(start + length, outer_end) - start;
}

// One process's regions, threads and children under construction, each
// with the index of its parent among them.
class ProcessItems {
 public:
  void add_regions(std::vector<RegionInfo>& regions, const std::optional<double>& base) {
    // (seq, node index), sorted: for each region's parent, the first region
    // with its seq. One vector, where a std::map made a node for every
    // region (the tree's most frequent allocation).
    std::vector<std::pair<std::int64_t, std::size_t>> by_seq;
    by_seq.reserve(regions.size());
    for (RegionInfo& region : regions) {
      Node node;
      node.offset = plus(base, region.t_start);
      node.elapsed = region.elapsed;
      node.seq = region.seq;
      by_seq.emplace_back(region.seq, m_nodes.size());
      m_thread_regions[region.thread].push_back(m_nodes.size());
      node.item = std::move(region);
      m_nodes.push_back(std::move(node));
    }
    std::sort(by_seq.begin(), by_seq.end());  // the loader's are in seq order already
    m_parents.resize(m_nodes.size());
    for (auto& [thread, list] : m_thread_regions) {
      std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) { return m_nodes[a].seq < m_nodes[b].seq; });
    }
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
      // A parent that is not there (corrupt data) leaves the region at the top.
      if (const auto& parent_seq = std::get<RegionInfo>(m_nodes[i].item).parent_seq) {
        const auto found = std::lower_bound(by_seq.begin(), by_seq.end(), std::pair(*parent_seq, std::size_t{0}));
        if (found != by_seq.end() && found->first == *parent_seq) {
          m_parents[i] = found->second;
        }
      }
    }
  }

  // A thread_start goes into the main-thread region open when it came; a
  // thread's outermost regions go into its thread_start.
  void add_threads(std::vector<ThreadInfo>& threads, const std::optional<double>& base) {
    for (ThreadInfo& thread : threads) {
      Node node;
      node.offset = plus(base, thread.t_start);
      node.elapsed = thread.elapsed;
      node.seq = thread.start_seq.value_or(k_unordered_seq);
      const auto parent = thread.start_seq ? open_region(std::string(k_main_thread), *thread.start_seq) : std::nullopt;
      m_threads.emplace(thread.name, m_nodes.size());
      node.item = std::move(thread);
      add(std::move(node), parent);
    }
    for (const auto& [thread, list] : m_thread_regions) {
      if (thread == k_main_thread || list.empty()) {
        continue;
      }
      auto found = m_threads.find(thread);
      if (found == m_threads.end()) {
        // git starts some threads without thread_start (read-cache's
        // extension loader shows up as "th01:unknown"): make one up,
        // spanning the thread's regions, where its first region began.
        const auto parent = open_region(std::string(k_main_thread), m_nodes[list.front()].seq);
        found = m_threads.emplace(thread, add(made_up_thread(thread, list), parent)).first;
      }
      for (const std::size_t region : list) {
        if (!m_parents[region]) {
          m_parents[region] = found->second;
        }
      }
    }
  }

  // A child_start or an exec goes into the region of its thread open when
  // it came, else into its thread's entry.
  [[nodiscard]] std::optional<std::size_t> event_parent(const std::string& thread,
                                                        const std::optional<std::int64_t>& seq) const {
    if (seq) {
      if (const auto region = open_region(thread, *seq)) {
        return region;
      }
    }
    if (const auto found = m_threads.find(thread); found != m_threads.end() && thread != k_main_thread) {
      return found->second;
    }
    return std::nullopt;
  }

  // Room for `n` more nodes (a process's regions, threads, children and
  // execs), so that adding them does not move those added before.
  void reserve(std::size_t n) {
    m_nodes.reserve(m_nodes.size() + n);
    m_parents.reserve(m_parents.size() + n);
  }

  std::size_t add(Node node, std::optional<std::size_t> parent) {
    m_nodes.push_back(std::move(node));
    m_parents.push_back(parent);
    return m_nodes.size() - 1;
  }

  // Moves every node into its parent; returns the top-level ones. The
  // deepest go first, so each one moves with all it holds. Before that,
  // each region is drawn within what holds it (its parent region, its
  // thread, else `process`), and each thread within `process`; outermost
  // first, so what moves moves inside its holder's final place. (Children
  // are not held: a child process may outlive the region it began in.)
  [[nodiscard]] std::vector<Node> nest(const Node& process) && {
    const std::vector<std::size_t> depth = depths();
    std::vector<std::size_t> order(m_nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return depth[a] > depth[b]; });
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node& node = m_nodes[*it];
      if (node.region() != nullptr) {
        keep_within(node, m_parents[*it] ? m_nodes[*m_parents[*it]] : process);
      } else if (node.thread() != nullptr) {
        keep_within(node, process);
      }
    }
    // Each list sized once: grown one by one, it moved its nodes (and
    // what they hold) again at every doubling.
    std::vector<std::size_t> count(m_nodes.size() + 1);  // the last: the top level
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
      ++count[m_parents[i].value_or(m_nodes.size())];
    }
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
      m_nodes[i].children.reserve(m_nodes[i].children.size() + count[i]);
    }
    std::vector<Node> top;
    top.reserve(count.back());
    for (const std::size_t i : order) {
      sort_siblings(m_nodes[i].children);
      if (m_parents[i]) {
        m_nodes[*m_parents[i]].children.push_back(std::move(m_nodes[i]));
      } else {
        top.push_back(std::move(m_nodes[i]));
      }
    }
    sort_siblings(top);
    return top;
  }

  [[nodiscard]] Node& node(std::size_t index) { return m_nodes[index]; }

  // Moves every node deeper than `max_depth` (0: top level) up to the
  // deepest level allowed, under its ancestor there, and breaks loops of
  // parent links. Returns each node's depth. Why: one session can nest a
  // million regions, and every renderer walks the tree recursively.
  std::vector<std::size_t> limit_depth(std::size_t max_depth) {
    std::vector<std::size_t> depth = depths();
    if (std::all_of(depth.begin(), depth.end(), [&](std::size_t d) { return d <= max_depth; })) {
      return depth;
    }
    std::vector<std::size_t> order(m_nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return depth[a] < depth[b]; });
    // For a node at max_depth or below: its ancestor one level above max_depth.
    std::vector<std::optional<std::size_t>> anchor(m_nodes.size());
    for (const std::size_t i : order) {
      if (depth[i] + 1 == max_depth) {
        anchor[i] = i;
      } else if (depth[i] >= max_depth && depth[i] > 0) {
        anchor[i] = anchor[*m_parents[i]];
        if (depth[i] > max_depth) {
          m_parents[i] = anchor[i];
          depth[i] = max_depth;
        }
      }
    }
    return depth;
  }

 private:
  // Innermost region of `thread` still open at event `seq` (by event order,
  // which needs no times).
  [[nodiscard]] std::optional<std::size_t> open_region(const std::string& thread, std::int64_t seq) const {
    const auto list = m_thread_regions.find(thread);
    if (list == m_thread_regions.end()) {
      return std::nullopt;
    }
    const auto after = std::upper_bound(list->second.begin(), list->second.end(), seq,
                                        [&](std::int64_t s, std::size_t node) { return s < m_nodes[node].seq; });
    if (after == list->second.begin()) {
      return std::nullopt;
    }
    // The walk ends at the thread's entry: a region of another thread hangs
    // under its thread (a ThreadInfo node), and what sent the event was not
    // in any region still open there.
    for (std::optional<std::size_t> candidate = *(after - 1); candidate; candidate = m_parents[*candidate]) {
      const RegionInfo* region = std::get_if<RegionInfo>(&m_nodes[*candidate].item);
      if (region == nullptr) {
        return std::nullopt;
      }
      if (!region->leave_seq || *region->leave_seq > seq) {
        return candidate;
      }
    }
    return std::nullopt;
  }

  // Each node's depth (0: top level). A loop of parent links (corrupt data)
  // is cut where it closes: that node goes to the top level.
  [[nodiscard]] std::vector<std::size_t> depths() {
    constexpr std::size_t k_unknown = std::numeric_limits<std::size_t>::max();
    constexpr std::size_t k_visiting = k_unknown - 1;
    std::vector<std::size_t> depth(m_nodes.size(), k_unknown);
    std::vector<std::size_t> path;
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
      for (std::size_t at = i; depth[at] == k_unknown;) {
        depth[at] = k_visiting;
        path.push_back(at);
        if (!m_parents[at]) {
          break;
        }
        if (depth[*m_parents[at]] == k_visiting) {
          m_parents[at].reset();
          break;
        }
        at = *m_parents[at];
      }
      for (; !path.empty(); path.pop_back()) {
        const std::size_t at = path.back();
        depth[at] = m_parents[at] ? depth[*m_parents[at]] + 1 : 0;
      }
    }
    return depth;
  }

  [[nodiscard]] Node made_up_thread(const std::string& name, const std::vector<std::size_t>& regions) const {
    const Node& first = m_nodes[regions.front()];
    Node made;
    made.offset = first.offset;
    made.seq = first.seq - 1;
    const std::optional<double> t_start = std::get<RegionInfo>(first.item).t_start;
    std::optional<double> t_end;
    for (const std::size_t r : regions) {
      const RegionInfo& region = std::get<RegionInfo>(m_nodes[r].item);
      if (region.t_start && region.elapsed) {
        t_end = std::max(t_end.value_or(0.0), *region.t_start + *region.elapsed);
      }
    }
    if (t_start && t_end) {
      made.elapsed = *t_end - *t_start;
    }
    made.item = ThreadInfo{name, std::nullopt, t_start, made.elapsed};
    return made;
  }

  std::vector<Node> m_nodes;
  std::vector<std::optional<std::size_t>> m_parents;
  std::map<std::string, std::vector<std::size_t>> m_thread_regions;  // node indexes, by seq
  std::map<std::string, std::size_t> m_threads;                     // thread name -> node index
};

class TreeBuilder {
 public:
  TreeBuilder(std::vector<ProcessRows> rows, const BuildOptions& options, std::optional<std::int64_t> origin_us)
      : m_rows(std::move(rows)), m_options(options), m_origin_us(origin_us), m_placement(place_sessions(m_rows)) {}

  std::vector<Node> build() {
    std::vector<Node> top;
    for (const std::size_t i : m_placement.top) {
      top.push_back(process_node(i, 0, k_max_tree_depth));
    }
    sort_siblings(top);
    return top;
  }

 private:
  // `budget`: the levels of nodes this process may take, itself included,
  // so that no tree is deeper than k_max_tree_depth.
  Node process_node(std::size_t index, int level, std::size_t budget) {
    ProcessRows& rows = m_rows[index];
    Node node;
    node.elapsed = rows.info.elapsed;
    if (rows.info.start_us && m_origin_us) {
      // In doubles: stored starts are any 64-bit values, their difference may not be.
      node.offset = (static_cast<double>(*rows.info.start_us) - static_cast<double>(*m_origin_us)) / 1e6;
    }
    const bool expand = !m_options.max_depth || level < *m_options.max_depth;
    // Its entries sit one level below it, at depths 0..max_depth among themselves.
    const std::size_t max_depth = budget - 2;
    ProcessItems items;
    // Threads made up for regions without a thread_start come on top: few.
    items.reserve(rows.regions.size() + rows.threads.size() + rows.children.size() + rows.execs.size() + 4);
    items.add_regions(rows.regions, node.offset);
    items.limit_depth(max_depth);  // also breaks loops, so walks up the regions end
    items.add_threads(rows.threads, node.offset);
    std::vector<std::pair<std::size_t, std::int64_t>> child_entries;  // node index, child_id
    for (ChildInfo& child : rows.children) {
      Node entry;
      entry.offset = plus(node.offset, child.t_start);
      entry.elapsed = child.elapsed;
      entry.seq = child.start_seq.value_or(k_unordered_seq);
      const auto parent = items.event_parent(child.thread, child.start_seq);
      const std::int64_t child_id = child.child_id;
      entry.item = std::move(child);
      child_entries.emplace_back(items.add(std::move(entry), parent), child_id);
    }
    std::vector<std::pair<std::size_t, std::int64_t>> exec_entries;  // node index, seq
    for (ExecInfo& exec : rows.execs) {
      Node entry;
      entry.offset = plus(node.offset, exec.t_start);
      if (exec.t_start && exec.result_t) {
        entry.elapsed = *exec.result_t - *exec.t_start;
      }
      entry.seq = exec.seq;
      const auto parent = items.event_parent(exec.thread, exec.seq);
      const std::int64_t seq = exec.seq;
      entry.item = std::move(exec);
      exec_entries.emplace_back(items.add(std::move(entry), parent), seq);
    }
    const std::vector<std::size_t> depth = items.limit_depth(max_depth);
    if (expand) {
      // A process under a child or exec entry at depth d may take
      // budget - d - 2 levels, and needs two: itself and its entries.
      const auto hang = [&](std::size_t entry, const std::vector<std::size_t>* sessions) {
        if (sessions == nullptr || depth[entry] + 4 > budget) {
          return;
        }
        for (const std::size_t session : *sessions) {
          items.node(entry).children.push_back(process_node(session, level + 1, budget - depth[entry] - 2));
        }
      };
      for (const auto& [entry, child_id] : child_entries) {
        const auto found = m_placement.by_child.find({index, child_id});
        hang(entry, found == m_placement.by_child.end() ? nullptr : &found->second);
      }
      for (const auto& [entry, seq] : exec_entries) {
        const auto found = m_placement.by_exec.find({index, seq});
        hang(entry, found == m_placement.by_exec.end() ? nullptr : &found->second);
        ends_with_its_program(items.node(entry));
      }
      if (const auto found = m_placement.orphans.find(index); found != m_placement.orphans.end() && budget >= 3) {
        for (const std::size_t orphan : found->second) {
          Node process = process_node(orphan, level + 1, budget - 1);
          process.seq = k_unordered_seq;
          items.add(std::move(process), std::nullopt);
        }
      }
    }
    node.children = std::move(items).nest(node);
    node.item = Boxed<ProcessInfo>(std::move(rows.info));
    return node;
  }

  // An exec that worked (no exec_result) lasts as long as the program that
  // replaced the process, when its session is in the tree.
  static void ends_with_its_program(Node& exec) {
    if (exec.elapsed || !exec.offset) {
      return;
    }
    for (const Node& program : exec.children) {
      if (const auto end = program.end(); end && *end >= *exec.offset) {
        exec.elapsed = std::max(exec.elapsed.value_or(0.0), *end - *exec.offset);
      }
    }
  }

  std::vector<ProcessRows> m_rows;
  BuildOptions m_options;
  std::optional<std::int64_t> m_origin_us;
  TreePlacement m_placement;
};

}  // namespace

std::optional<double> Node::end() const { return plus(offset, elapsed); }

void sort_siblings(std::vector<Node>& nodes) {
  // Most lists come in order (a process's events are): a stable sort would
  // leave them as they are, but moves every node twice to find that out.
  const auto sort = [&nodes](const auto& less) {
    if (!std::is_sorted(nodes.begin(), nodes.end(), less)) {
      std::stable_sort(nodes.begin(), nodes.end(), less);
    }
  };
  const bool timed = std::all_of(nodes.begin(), nodes.end(), [](const Node& n) { return n.offset.has_value(); });
  if (timed) {
    sort([](const Node& a, const Node& b) { return *a.offset != *b.offset ? *a.offset < *b.offset : a.seq < b.seq; });
  } else {
    sort([](const Node& a, const Node& b) { return a.seq < b.seq; });
  }
}

namespace {

std::size_t count_processes(const std::vector<Node>& nodes) {
  std::size_t n = 0;
  for (const Node& node : nodes) {
    n += (node.process() != nullptr ? 1 : 0) + count_processes(node.children);
  }
  return n;
}

}  // namespace

std::size_t count_processes(const ProcessTree& tree) { return count_processes(tree.processes); }

ProcessTree build_process_tree(const std::string& root, std::vector<ProcessRows> rows, const BuildOptions& options) {
  std::sort(rows.begin(), rows.end(), [](const ProcessRows& a, const ProcessRows& b) { return a.info.sid < b.info.sid; });
  ProcessTree tree;
  tree.root = root;
  for (const ProcessRows& r : rows) {
    if (r.info.start_us && (!tree.origin_us || *r.info.start_us < *tree.origin_us)) {
      tree.origin_us = r.info.start_us;
    }
  }
  tree.processes = TreeBuilder(std::move(rows), options, tree.origin_us).build();
  return tree;
}

}  // namespace trace2d::model
