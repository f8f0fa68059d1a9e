// The HTML report: one self-contained page (src/report/html/, inlined at build time) with the
// analysis as compressed JSON inside it. The data (docs/tracer.md, "The HTML report") is the call
// tree of the full stacks merged by frame, pruned of the nodes under a small share of every
// metric, with the timeline, the sizes, the top sites with their advice and the threads. Its size
// grows with the call tree's nodes, never with the allocations.
#include "report/common.hpp"
#include "report/html_page.hpp"

#include "analyze/flat_map.hpp"
#include "analyze/operation.hpp"
#include "analyze/thread_stacks.hpp"
#include "analyze/timeline.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lowalloc::report {

namespace {

// The metrics of the page, in the order of every 5-value array of the data.
constexpr std::size_t metric_count = 5;
using values = std::array<std::uint64_t, metric_count>;
constexpr const char* metric_names = R"(["allocations","bytes","temporary","leaked","peak"])";

values values_of(const counters& c) noexcept {
  return {c.allocations, c.bytes_allocated, c.temporary, c.leaked_bytes, c.peak_bytes};
}

void add(values& into, const values& v) noexcept {
  for (std::size_t m = 0; m < metric_count; ++m) into[m] += v[m];
}

// The share under which a node of the call tree, in every metric, is merged into its caller.
constexpr double prune_share = 1e-4;

// frames[].flags
constexpr unsigned flag_allocator = 1;
constexpr unsigned flag_inlined = 2;
constexpr unsigned flag_start = 4;

// Compact JSON made in a string.
class json_text {
 public:
  std::string& str() noexcept { return s_; }
  json_text& raw(std::string_view v) {
    s_ += v;
    return *this;
  }
  json_text& num(std::uint64_t n) {
    char buf[24];
    s_.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, n).ptr - buf));
    return *this;
  }
  json_text& real(double v, int decimals) {
    if (!std::isfinite(v)) v = 0;
    return raw(fixed(v, decimals));
  }
  json_text& text(std::string_view v) { return raw(json_string(v)); }
  json_text& boolean(bool b) { return raw(b ? "true" : "false"); }
  template <class It, class F>
  json_text& array(It first, It last, F&& each) {
    s_ += '[';
    for (It i = first; i != last; ++i) {
      if (i != first) s_ += ',';
      each(*i);
    }
    s_ += ']';
    return *this;
  }
  json_text& numbers(const std::vector<std::uint64_t>& v) {
    return array(v.begin(), v.end(), [&](std::uint64_t n) { num(n); });
  }

 private:
  std::string s_;
};

// Every string of the data once; frames and sites name them by index.
class string_table {
 public:
  string_table() { of(""); }
  std::uint32_t of(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, static_cast<std::uint32_t>(strings_.size()));
    if (inserted) strings_.push_back(&it->first);
    return it->second;
  }
  void write(json_text& out) const {
    out.array(strings_.begin(), strings_.end(), [&](const std::string* s) { out.text(*s); });
  }

 private:
  std::unordered_map<std::string, std::uint32_t> index_;
  std::vector<const std::string*> strings_;
};

// The call tree of every stack, outermost frame under the root, merged by frame id.
struct call_tree {
  static constexpr std::uint32_t root_frame = ~std::uint32_t{0};
  std::vector<std::uint32_t> parent{0};
  std::vector<std::uint32_t> frame{root_frame};  // an id of analysis::frames, root_frame for 0
  std::vector<values> self{values{}};
  std::vector<std::uint32_t> node_of_stack;  // the node each stack ends at
  std::vector<std::uint8_t> flags;           // by frame id
};

call_tree build_tree(const analysis& a) {
  call_tree t;
  t.node_of_stack.assign(a.stacks.size(), 0);
  if (a.frames) t.flags.assign(a.frames->frames.size(), 0);
  analyze::detail::u64_map<std::uint32_t> child;  // parent << 32 | frame id -> node
  for (std::size_t s = 0; s < a.stacks.size(); ++s) {
    const analyze::stack& st = a.stacks[s];
    if (st.totals.allocations == 0) continue;
    std::uint32_t node = 0;
    for (std::uint32_t k = st.frame_count; k-- > 0;) {  // outermost first
      const std::uint32_t id = a.frames->ids[st.first_frame + k];
      std::uint8_t& f = t.flags[id];
      if (k < st.allocator_frames) f |= flag_allocator;
      if (k >= st.frame_count - st.start_frames) f |= flag_start;
      if (a.frames->frames[id].inlined) f |= flag_inlined;
      bool inserted = false;
      std::uint32_t& c = child.get(std::uint64_t{node} << 32 | id, inserted);
      if (inserted) {
        c = static_cast<std::uint32_t>(t.parent.size());
        t.parent.push_back(node);
        t.frame.push_back(id);
        t.self.push_back(values{});
      }
      node = c;
    }
    t.node_of_stack[s] = node;
    add(t.self[node], values_of(st.totals));
  }
  return t;
}

// The tree without the nodes under prune_share of every metric: their self values go to the
// nearest kept ancestor.
struct pruned_tree {
  std::vector<std::uint32_t> parent;
  std::vector<std::uint32_t> frame;
  std::vector<values> self;
  std::vector<std::uint32_t> kept_of;  // by node of the full tree: its node here
  std::size_t removed = 0;
  values removed_self{};
};

pruned_tree prune(const call_tree& t, const values& totals) {
  const std::size_t n = t.parent.size();
  std::vector<values> inclusive = t.self;
  for (std::size_t i = n; i-- > 1;) add(inclusive[t.parent[i]], inclusive[i]);
  pruned_tree p;
  p.kept_of.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    bool keep = i == 0;
    for (std::size_t m = 0; m < metric_count && !keep; ++m)
      keep = totals[m] != 0 &&
             static_cast<double>(inclusive[i][m]) >= prune_share * static_cast<double>(totals[m]);
    // Inclusive values grow towards the root: a kept node's parent is kept.
    if (keep) {
      p.kept_of[i] = static_cast<std::uint32_t>(p.parent.size());
      p.parent.push_back(i == 0 ? 0 : p.kept_of[t.parent[i]]);
      p.frame.push_back(t.frame[i]);
      p.self.push_back(t.self[i]);
    } else {
      p.kept_of[i] = p.kept_of[t.parent[i]];
      add(p.self[p.kept_of[i]], t.self[i]);
      add(p.removed_self, t.self[i]);
      ++p.removed;
    }
  }
  return p;
}

// What the page shows for a frame without a function name: "module+0xoff", or the address.
std::string function_text(const frame& f) {
  if (!f.function.empty()) return readable(f.function);
  if (!f.module.empty()) return std::string(basename(f.module)) + "+" + hex(f.offset);
  return hex(f.address);
}

// "1,000 -> 10 allocations" and the like: the site's top advice as the text report prints it.
std::string advice_text(const std::vector<analyze::advice_item>* advice, std::size_t site) {
  if (advice == nullptr) return {};
  for (const analyze::advice_item& it : *advice) {
    if (it.site != site || it.kind == "none") continue;
    std::string s = it.chosen.suggestion;
    s += " (";
    s += it.kind;
    s += ", ";
    s += it.confidence;
    s += " confidence): ";
    s += thousands(it.allocations);
    s += " -> ";
    s += counted(it.chosen.allocations_after, "allocation");
    return s;
  }
  return {};
}

void write_sizes(json_text& out, const size_counts& sizes) {
  out.array(sizes.buckets.begin(), sizes.buckets.end(), [&](const size_counts::bucket_count& b) {
    out.raw("[").text(bucket_label(b.bucket)).raw(",").num(b.count).raw("]");
  });
}

void write_values(json_text& out, const std::vector<values>& v) {
  std::string& s = out.str();
  s += '[';
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t m = 0; m < metric_count; ++m) {
      if (i != 0 || m != 0) s += ',';
      out.num(v[i][m]);
    }
  s += ']';
}

void write_timeline(json_text& out, const analyze::timeline* tl) {
  out.raw("\"timeline\":{");
  std::vector<analyze::timeline::point> points;
  if (tl != nullptr) points = tl->points();
  const auto column = [&](const char* name, auto&& value) {
    out.raw("\"").raw(name).raw("\":");
    out.array(points.begin(), points.end(), value);
  };
  column("t", [&](const analyze::timeline::point& p) { out.real(p.seconds, 9); });
  out.raw(",");
  column("live", [&](const analyze::timeline::point& p) { out.num(p.live_bytes); });
  out.raw(",");
  column("live_max", [&](const analyze::timeline::point& p) { out.num(p.max_live_bytes); });
  out.raw(",");
  column("allocs", [&](const analyze::timeline::point& p) { out.num(p.allocations); });
  out.raw(",");
  column("allocs_per_s", [&](const analyze::timeline::point& p) {
    out.num(p.width_seconds > 0 ? static_cast<std::uint64_t>(std::llround(
                                      static_cast<double>(p.allocations) / p.width_seconds))
                                : p.allocations);
  });
  out.raw(",\"peak\":{\"t\":")
      .real(tl != nullptr ? tl->peak_seconds() : 0, 9)
      .raw(",\"bytes\":")
      .num(tl != nullptr ? tl->peak_bytes() : 0)
      .raw("}}");
}

// Per thread that allocated, the self values of the (kept) nodes its stacks end at.
void write_threads(json_text& out, const analyze::thread_stacks* ts, const call_tree& tree,
                   const pruned_tree& pruned) {
  out.raw("\"threads\":[");
  if (ts != nullptr && ts->threads() > 1) {
    struct row {
      std::uint32_t thread;
      std::uint32_t node;
      values v;
    };
    std::vector<row> rows;
    rows.reserve(ts->entries().size());
    for (const analyze::thread_stacks::entry& e : ts->entries()) {
      const std::uint32_t node =
          e.stack < tree.node_of_stack.size() ? pruned.kept_of[tree.node_of_stack[e.stack]] : 0;
      rows.push_back(
          {e.thread, node, {e.allocations, e.bytes, e.temporary, e.live_bytes, e.peak_bytes}});
    }
    std::sort(rows.begin(), rows.end(), [](const row& x, const row& y) {
      return x.thread != y.thread ? x.thread < y.thread : x.node < y.node;
    });
    bool first_thread = true;
    for (std::size_t i = 0; i < rows.size();) {
      const std::uint32_t thread = rows[i].thread;
      std::vector<std::uint32_t> nodes;
      std::vector<values> vals;
      values sum{};
      for (; i < rows.size() && rows[i].thread == thread; ++i) {
        if (nodes.empty() || nodes.back() != rows[i].node) {
          nodes.push_back(rows[i].node);
          vals.push_back(values{});
        }
        add(vals.back(), rows[i].v);
        add(sum, rows[i].v);
      }
      out.raw(first_thread ? "{\"index\":" : ",{\"index\":").num(thread);
      first_thread = false;
      out.raw(",\"tid\":").num(thread < ts->tids().size() ? ts->tids()[thread] : 0);
      out.raw(",\"allocations\":").num(sum[0]).raw(",\"bytes\":").num(sum[1]);
      out.raw(",\"self\":{\"nodes\":");
      out.array(nodes.begin(), nodes.end(), [&](std::uint32_t n) { out.num(n); });
      out.raw(",\"values\":");
      write_values(out, vals);
      out.raw("}}");
    }
  }
  out.raw("]");
}

std::string page_json(const analysis& a, const report_options& ro) {
  const call_tree tree = build_tree(a);
  const values totals = values_of(a.totals);
  const pruned_tree pruned = prune(tree, totals);
  string_table strings;
  json_text out;

  out.raw("{\"version\":1,\"title\":");
  std::string title = "lowalloc report";
  if (!ro.trace_name.empty()) {
    title += ": ";
    title += basename(ro.trace_name);
  }
  out.text(title);
  std::string command;
  for (const std::string& arg : a.process.argv) {
    if (!command.empty()) command += ' ';
    command += arg;
  }
  out.raw(",\"command\":").text(command);
  {
    report_options summary;
    summary.trace_name = ro.trace_name;
    summary.top = 0;
    std::ostringstream text;
    write_text(text, a, summary);
    out.raw(",\"summary_text\":").text(text.str());
  }
  const counters& t = a.totals;
  out.raw(",\"totals\":{\"allocations\":").num(t.allocations);
  out.raw(",\"bytes\":").num(t.bytes_allocated).raw(",\"frees\":").num(t.frees);
  out.raw(",\"temporary\":").num(t.temporary);
  out.raw(",\"leaked_allocations\":").num(t.leaked_allocations);
  out.raw(",\"leaked_bytes\":").num(t.leaked_bytes).raw(",\"peak_bytes\":").num(t.peak_bytes);
  out.raw(",\"run_time_seconds\":").real(a.run_time_seconds, 9);
  out.raw(",\"threads\":").num(a.threads).raw("}");
  out.raw(",\"metrics\":").raw(metric_names);
  out.raw(",\"thread_metrics\":").raw(metric_names);

  // The frames of the kept nodes, numbered in node order; frames[0] is the root.
  std::vector<std::uint32_t> frame_number(tree.flags.size(), 0);
  std::vector<std::uint32_t> frames_out;  // frame ids, by number - 1
  std::vector<std::uint32_t> node_frame(pruned.frame.size(), 0);
  for (std::size_t i = 1; i < pruned.frame.size(); ++i) {
    std::uint32_t& n = frame_number[pruned.frame[i]];
    if (n == 0) {
      frames_out.push_back(pruned.frame[i]);
      n = static_cast<std::uint32_t>(frames_out.size());
    }
    node_frame[i] = n;
  }
  json_text frames;
  frames.raw("[[").num(strings.of("all")).raw(",0,0,0,0]");
  for (std::uint32_t id : frames_out) {
    const frame& f = a.frames->frames[id];
    frames.raw(",[").num(strings.of(function_text(f))).raw(",").num(strings.of(f.file));
    frames.raw(",").num(f.line).raw(",").num(strings.of(f.module)).raw(",");
    frames.num(tree.flags[id]).raw("]");
  }
  frames.raw("]");

  json_text body;
  body.raw(",\"frames\":").raw(frames.str());
  body.raw(",\"tree\":{\"parent\":")
      .numbers(std::vector<std::uint64_t>(pruned.parent.begin(), pruned.parent.end()));
  body.raw(",\"frame\":").numbers(std::vector<std::uint64_t>(node_frame.begin(), node_frame.end()));
  body.raw(",\"self\":");
  write_values(body, pruned.self);
  body.raw("},\"pruned\":{\"share\":0.0001,\"nodes\":").num(pruned.removed);
  body.raw(",\"nodes_before\":").num(tree.parent.size()).raw(",\"self\":[");
  for (std::size_t m = 0; m < metric_count; ++m)
    body.raw(m == 0 ? "" : ",").num(pruned.removed_self[m]);
  body.raw("]},");
  write_timeline(body, ro.timeline);

  body.raw(",\"sizes\":[");
  bool first = true;
  for (std::size_t b = 0; b < a.sizes.counts.size(); ++b) {
    if (a.sizes.counts[b] == 0) continue;
    body.raw(first ? "[" : ",[").text(bucket_label(b)).raw(",").num(a.sizes.counts[b]).raw("]");
    first = false;
  }
  body.raw("]");

  // The top sites by allocations, and the kept nodes their stacks end at.
  const std::vector<const site*> sites = ranked_sites(a, sort_key::allocations, html_sites);
  std::vector<std::int32_t> rank(a.sites.size(), -1);
  for (std::size_t r = 0; r < sites.size(); ++r)
    rank[static_cast<std::size_t>(sites[r] - a.sites.data())] = static_cast<std::int32_t>(r);
  std::vector<std::vector<std::uint32_t>> site_nodes(sites.size());
  for (std::size_t s = 0; s < a.stacks.size(); ++s) {
    const analyze::stack& st = a.stacks[s];
    if (st.totals.allocations == 0 || st.site >= rank.size() || rank[st.site] < 0) continue;
    site_nodes[static_cast<std::size_t>(rank[st.site])].push_back(
        pruned.kept_of[tree.node_of_stack[s]]);
  }
  body.raw(",\"sites\":[");
  for (std::size_t r = 0; r < sites.size(); ++r) {
    const site& s = *sites[r];
    const std::size_t index = static_cast<std::size_t>(&s - a.sites.data());
    const frame* f = s.stack.empty() ? nullptr : &s.stack[0];
    body.raw(r == 0 ? "{\"id\":" : ",{\"id\":").num(index);
    body.raw(",\"function\":").num(f != nullptr ? strings.of(function_text(*f)) : 0);
    body.raw(",\"file\":").num(f != nullptr ? strings.of(f->file) : 0);
    body.raw(",\"line\":").num(f != nullptr ? f->line : 0);
    std::string op = analyze::operation_text(a.operation_of(s));
    if (!op.empty()) op.insert(0, "via ");
    body.raw(",\"op\":").text(op);
    const counters& c = s.totals;
    body.raw(",\"allocations\":").num(c.allocations).raw(",\"bytes\":").num(c.bytes_allocated);
    body.raw(",\"temporary\":").num(c.temporary).raw(",\"leaked_bytes\":").num(c.leaked_bytes);
    body.raw(",\"peak_bytes\":").num(c.peak_bytes);
    body.raw(",\"max_live_bytes\":").num(c.max_live_bytes).raw(",\"sizes\":");
    write_sizes(body, s.sizes);
    body.raw(",\"advice\":").text(advice_text(ro.advice, index));
    std::vector<std::uint32_t>& nodes = site_nodes[r];
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    body.raw(",\"nodes\":");
    body.array(nodes.begin(), nodes.end(), [&](std::uint32_t n) { body.num(n); });
    body.raw("}");
  }
  body.raw("],");
  write_threads(body, ro.threads, tree, pruned);

  const analyze::process_info& p = a.process;
  body.raw(",\"process\":{\"pid\":").num(p.pid).raw(",\"fork_child\":").boolean(p.fork_child);
  body.raw(",\"exec_child\":").boolean(p.exec_child).raw(",\"exe\":").text(p.exe).raw("}");
  std::vector<std::string> notes = a.module_warnings;
  notes.insert(notes.end(), a.line_notes.begin(), a.line_notes.end());
  if (!a.truncation.empty())
    notes.push_back("warning: the trace is damaged, read up to: " + a.truncation);
  if (a.running) notes.push_back("note: the process was still running when the report was made");
  for (const analyze::shadowed_functions& s : a.shadowed)
    notes.push_back("warning: " + shadowed_text(s));
  body.raw(",\"notes\":");
  body.array(notes.begin(), notes.end(), [&](const std::string& n) { body.text(n); });
  body.raw("}");

  // The strings last made, first written.
  out.raw(",\"strings\":");
  strings.write(out);
  out.raw(body.str());
  return std::move(out.str());
}

std::string gzip(const std::string& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: deflateInit2 failed");
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib: deflate failed");
  return out;
}

std::string base64(const std::string& in) {
  static constexpr char digits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(in[k]));
  };
  for (; i + 3 <= in.size(); i += 3) {
    const std::uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += digits[v >> 18];
    out += digits[(v >> 12) & 63];
    out += digits[(v >> 6) & 63];
    out += digits[v & 63];
  }
  if (i < in.size()) {
    const std::uint32_t v = byte(i) << 16 | (i + 1 < in.size() ? byte(i + 1) << 8 : 0);
    out += digits[v >> 18];
    out += digits[(v >> 12) & 63];
    out += i + 1 < in.size() ? digits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Writes `html` to `out` with its marker lines replaced.
void write_page(std::ostream& out, const std::string& data_element) {
  const std::string& html = page::html();
  const std::pair<std::string_view, const std::string*> markers[] = {
      {"/*LOWALLOC_CSS*/", &page::css()},
      {"/*LOWALLOC_JS*/", &page::js()},
      {"<!--LOWALLOC_DATA-->", &data_element}};
  std::size_t at = 0;
  while (true) {
    std::size_t next = std::string::npos;
    const std::string* replacement = nullptr;
    std::size_t length = 0;
    for (const auto& [marker, text] : markers) {
      const std::size_t found = html.find(marker, at);
      if (found < next) {
        next = found;
        replacement = text;
        length = marker.size();
      }
    }
    if (next == std::string::npos) break;
    out.write(html.data() + at, static_cast<std::streamsize>(next - at));
    out.write(replacement->data(), static_cast<std::streamsize>(replacement->size()));
    at = next + length;
  }
  out.write(html.data() + at, static_cast<std::streamsize>(html.size() - at));
}

}  // namespace

std::string html_data_json(const analysis& a, const report_options& ro) { return page_json(a, ro); }

void write_html(std::ostream& out, const analysis& a, const report_options& ro) {
  std::string json = page_json(a, ro);
  std::string element = "<script id=\"lowalloc-data\" type=\"application/octet-stream\" ";
  const char* plain = std::getenv("LOWALLOC_HTML_PLAIN");
  if (plain != nullptr && std::string_view(plain) == "1") {
    // '<' only occurs in strings, where \u003c is the same character: no "</script" in the page.
    std::string escaped;
    escaped.reserve(json.size());
    for (char c : json) {
      if (c == '<')
        escaped += "\\u003c";
      else
        escaped += c;
    }
    element += "data-encoding=\"json\">";
    element += escaped;
  } else {
    element += "data-encoding=\"gzip-base64\">";
    element += base64(gzip(json));
  }
  element += "</script>";
  json = std::string();
  write_page(out, element);
}

}  // namespace lowalloc::report
