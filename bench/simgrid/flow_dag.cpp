/*
 * flow_dag.cpp - replays a Tenbin workflow schedule on SimGrid's s4u activity
 * API (Exec and Comm activities joined by add_successor), to compare the two
 * simulators' makespans on a model both express identically:
 *
 *   - task t on host h is an Exec of work(t) flops on a host of speed[h]
 *     flop/s, i.e. it runs work/speed seconds;
 *   - each host runs its tasks one at a time, in the order of their start
 *     times in the schedule: consecutive tasks of a host are joined by a
 *     dependency (SimGrid would otherwise share the CPU between them);
 *   - an edge p -> s with data d between different hosts is a Comm that
 *     starts when p ends and takes L + d / B whatever else is in flight (no
 *     contention); on one host there is no transfer, s just waits for p.
 *
 * Usage:
 *   flow_dag [options] WORKFLOW.json SCHEDULE.json [--cfg=... --log=...]
 *     WORKFLOW.json  WfFormat 1.5, as `tenbin flow convert` writes it: runtime
 *                    = work at speed 1; an edge's data is the bytes of the
 *                    distinct files the parent writes and the child reads
 *     SCHEDULE.json  the output of `tenbin flow simulate ... --json`: "tasks"
 *                    [{"id", "host", "start", "finish"}] and "hosts" [speeds]
 *   --speeds S0,S1,...  host speeds in flop/s (default: SCHEDULE's "hosts")
 *   --latency L         seconds (default 0)
 *   --bandwidth B       bytes per second (default inf: transfers take L)
 *   --links fatpipe|single|shared
 *                       fatpipe (default): every ordered host pair has a
 *                       FATPIPE link of its own, so every transfer gets all
 *                       of B whatever else is in flight (Tenbin's model);
 *                       single: one FATPIPE link on every route (the same
 *                       model, but every transfer's start and end re-solves
 *                       one constraint holding all transfers in flight);
 *                       shared: a SHARED link per ordered pair, so concurrent
 *                       transfers between the same two hosts share B (not
 *                       Tenbin's model: a check that contention would show)
 *   --comms lazy|eager  lazy (default): a transfer's Comm is created and
 *                       started when its parent's Exec completes (the child
 *                       depends on the parent Exec until then); eager: all
 *                       Comms are created up front, joined to the parent by
 *                       add_successor.  Same simulated times; SimGrid 3.32
 *                       keeps every Comm made by Comm::sendto_init in one
 *                       std::list (maestro's activities) from its creation
 *                       and removes it at its end with list::remove, a walk
 *                       of the whole list: eager costs O(edges^2) (minutes
 *                       for 90k edges), lazy O(edges * transfers in flight)
 *   --tasks-out FILE    write every task's host, start and finish (TSV)
 * Prints one JSON line: makespan (end of the last activity), counts, the
 * largest |start - scheduled start| and the simulation's own times.
 *
 * Exactness: SimGrid compares rates to maxmin/precision (1e-5 flop/s or
 * byte/s) and remaining work against it, so flops and bytes are scaled by
 * powers of two (speeds and bandwidth alike, the times do not change) to
 * make that precision negligible; the Comm payload is an integer number of
 * (scaled) bytes.  The network model is CM02 without the TCP-gamma window,
 * cross-traffic or latency/bandwidth correction factors, so that a transfer
 * takes exactly L + size / B (a --cfg= of the same name overrides them), and
 * surf/precision is 1e-12 s instead of 1e-9.  Tasks of a host starting at the
 * same time (zero-length ones) are chained by finish time, then in a
 * topological order, so the chain never contradicts the workflow.
 */
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <cjson/cJSON.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace sg4 = simgrid::s4u;

XBT_LOG_NEW_DEFAULT_CATEGORY(flow_dag, "Tenbin workflow replay");

namespace {

[[noreturn]] void die(const std::string& msg)
{
    std::fprintf(stderr, "flow_dag: %s\n", msg.c_str());
    std::exit(2);
}

struct JsonDoc {
    cJSON* root = nullptr;
    explicit JsonDoc(const std::string& path)
    {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            die(path + ": cannot open");
        std::stringstream ss;
        ss << in.rdbuf();
        std::string text = ss.str();
        root = cJSON_ParseWithLength(text.data(), text.size());
        if (root == nullptr)
            die(path + ": not valid JSON");
    }
    ~JsonDoc() { cJSON_Delete(root); }
    JsonDoc(const JsonDoc&)            = delete;
    JsonDoc& operator=(const JsonDoc&) = delete;
};

const cJSON* member(const cJSON* obj, const char* key, const std::string& where, bool required = true)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == nullptr && required)
        die(where + ": missing \"" + key + "\"");
    return v;
}

double number(const cJSON* obj, const char* key, const std::string& where)
{
    const cJSON* v = member(obj, key, where);
    if (!cJSON_IsNumber(v))
        die(where + "." + key + ": not a number");
    return v->valuedouble;
}

std::string string(const cJSON* v, const std::string& where)
{
    if (!cJSON_IsString(v))
        die(where + ": not a string");
    return v->valuestring;
}

struct Edge {
    size_t from, to;
    double data;
};

struct Workflow {
    std::vector<std::string> id;
    std::unordered_map<std::string, size_t> index;
    std::vector<double> work;
    std::vector<Edge> edges;
};

/* WfFormat 1.5: specification.tasks (id, parents, children, inputFiles,
 * outputFiles), specification.files (id, sizeInBytes), execution.tasks (id,
 * runtimeInSeconds).  Edges are the parent/child links; the data of an edge
 * is the bytes of the distinct files its parent writes and its child reads,
 * as Tenbin's reader counts them. */
Workflow read_workflow(const std::string& path)
{
    JsonDoc doc(path);
    const cJSON* wf   = member(doc.root, "workflow", path);
    const cJSON* spec = member(wf, "specification", path + ": workflow");
    const cJSON* exec = member(wf, "execution", path + ": workflow");
    const cJSON* tasks = member(spec, "tasks", path + ": workflow.specification");
    Workflow w;
    const cJSON* t;
    cJSON_ArrayForEach(t, tasks)
    {
        const cJSON* id = cJSON_GetObjectItemCaseSensitive(t, "id");
        if (!cJSON_IsString(id))
            die(path + ": workflow.specification.tasks[" + std::to_string(w.id.size()) + "]: no string \"id\"");
        if (!w.index.emplace(id->valuestring, w.id.size()).second)
            die(path + ": duplicate task '" + id->valuestring + "'");
        w.id.emplace_back(id->valuestring);
    }
    size_t n = w.id.size();
    std::unordered_map<std::string, uint32_t> file_index;
    std::vector<double> fsize;
    const cJSON* f;
    cJSON_ArrayForEach(f, member(spec, "files", path + ": workflow.specification"))
    {
        const cJSON* id   = cJSON_GetObjectItemCaseSensitive(f, "id");
        const cJSON* size = cJSON_GetObjectItemCaseSensitive(f, "sizeInBytes");
        if (!cJSON_IsString(id) || !cJSON_IsNumber(size))
            die(path + ": workflow.specification.files[" + std::to_string(fsize.size()) +
                "]: needs a string \"id\" and a number \"sizeInBytes\"");
        if (!file_index.emplace(id->valuestring, static_cast<uint32_t>(fsize.size())).second)
            die(path + ": duplicate file '" + id->valuestring + "'");
        fsize.push_back(size->valuedouble);
    }
    /* (messages are built only on error: these run once per reference) */
    auto task_of = [&](const cJSON* v, const std::string& where, const char* key) {
        if (!cJSON_IsString(v))
            die(where + key + ": not a string");
        auto it = w.index.find(v->valuestring);
        if (it == w.index.end())
            die(where + key + ": unknown task '" + v->valuestring + "'");
        return it->second;
    };
    /* the distinct files of a task's list, as sorted indices */
    auto files_of = [&](const cJSON* task, const char* key, const std::string& where) {
        std::vector<uint32_t> out;
        const cJSON* list = member(task, key, where, false);
        const cJSON* v;
        cJSON_ArrayForEach(v, list)
        {
            if (!cJSON_IsString(v))
                die(where + "." + key + ": not a string");
            auto it = file_index.find(v->valuestring);
            if (it == file_index.end())
                die(where + "." + key + ": unknown file '" + v->valuestring + "'");
            out.push_back(it->second);
        }
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    };
    std::vector<std::vector<uint32_t>> in(n), out(n);
    std::map<std::pair<size_t, size_t>, size_t> edge_of; /* (from, to) -> edge */
    size_t i = 0;
    cJSON_ArrayForEach(t, tasks)
    {
        std::string where = path + ": task '" + w.id[i] + "' ";
        in[i]             = files_of(t, "inputFiles", where);
        out[i]            = files_of(t, "outputFiles", where);
        for (const char* key : {"parents", "children"}) {
            const cJSON* v;
            cJSON_ArrayForEach(v, member(t, key, where, false))
            {
                size_t o = task_of(v, where, key);
                auto e   = std::strcmp(key, "parents") == 0 ? std::make_pair(o, i) : std::make_pair(i, o);
                if (edge_of.emplace(e, w.edges.size()).second)
                    w.edges.push_back({e.first, e.second, 0.0});
            }
        }
        i++;
    }
    for (Edge& e : w.edges) {
        const auto &o = out[e.from], &r = in[e.to];
        for (size_t x = 0, y = 0; x < o.size() && y < r.size();) {
            if (o[x] < r[y])
                x++;
            else if (o[x] > r[y])
                y++;
            else {
                e.data += fsize[o[x]];
                x++;
                y++;
            }
        }
    }
    w.work.assign(n, NAN);
    cJSON_ArrayForEach(t, member(exec, "tasks", path + ": workflow.execution"))
    {
        size_t k        = task_of(cJSON_GetObjectItemCaseSensitive(t, "id"), path, ": workflow.execution.tasks[].id");
        const cJSON* rt = cJSON_GetObjectItemCaseSensitive(t, "runtimeInSeconds");
        if (!cJSON_IsNumber(rt))
            die(path + ": execution of '" + w.id[k] + "': no number \"runtimeInSeconds\"");
        w.work[k] = rt->valuedouble;
    }
    for (size_t k = 0; k < n; k++)
        if (std::isnan(w.work[k]))
            die(path + ": task '" + w.id[k] + "' has no runtime in workflow.execution");
    return w;
}

struct Schedule {
    std::vector<int> host;
    std::vector<double> start, finish;
    std::vector<double> speeds; /* "hosts", if present */
    double makespan = NAN;
};

Schedule read_schedule(const std::string& path, const Workflow& w)
{
    JsonDoc doc(path);
    Schedule s;
    size_t n = w.id.size();
    s.host.assign(n, -1);
    s.start.assign(n, NAN);
    s.finish.assign(n, NAN);
    const cJSON* v;
    cJSON_ArrayForEach(v, member(doc.root, "hosts", path, false))
    {
        if (!cJSON_IsNumber(v))
            die(path + ": hosts: not a number");
        s.speeds.push_back(v->valuedouble);
    }
    if (const cJSON* mk = member(doc.root, "makespan", path, false); cJSON_IsNumber(mk))
        s.makespan = mk->valuedouble;
    const cJSON* t;
    cJSON_ArrayForEach(t, member(doc.root, "tasks", path))
    {
        std::string id = string(member(t, "id", path + ": a task"), path + ": task id");
        auto it        = w.index.find(id);
        if (it == w.index.end())
            die(path + ": task '" + id + "' is not in the workflow");
        size_t k    = it->second;
        double h    = number(t, "host", path + ": task '" + id + "'");
        s.host[k]   = static_cast<int>(h);
        s.start[k]  = number(t, "start", path + ": task '" + id + "'");
        s.finish[k] = number(t, "finish", path + ": task '" + id + "'");
        if (h < 0 || h != std::floor(h))
            die(path + ": task '" + id + "': bad host");
    }
    for (size_t k = 0; k < n; k++)
        if (s.host[k] < 0)
            die(path + ": task '" + w.id[k] + "' is not scheduled");
    return s;
}

std::vector<double> parse_list(const std::string& text)
{
    std::vector<double> v;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        char* end = nullptr;
        double x  = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !(x > 0) || !std::isfinite(x))
            die("--speeds: '" + item + "' is not a positive number");
        v.push_back(x);
    }
    return v;
}

double parse_number(const char* opt, const char* text)
{
    char* end = nullptr;
    double x  = std::strtod(text, &end);
    if (*text == '\0' || *end != '\0' || std::isnan(x) || x < 0)
        die(std::string(opt) + ": '" + text + "' is not a non-negative number");
    return x;
}

/* Positions in a topological order (Kahn, smallest index first). */
std::vector<size_t> topo_positions(const Workflow& w)
{
    size_t n = w.id.size();
    std::vector<std::vector<size_t>> succ(n);
    std::vector<size_t> indeg(n, 0), pos(n, 0);
    for (const Edge& e : w.edges) {
        succ[e.from].push_back(e.to);
        indeg[e.to]++;
    }
    std::vector<size_t> ready;
    for (size_t k = n; k-- > 0;)
        if (indeg[k] == 0)
            ready.push_back(k);
    size_t next = 0;
    while (!ready.empty()) {
        size_t k = ready.back();
        ready.pop_back();
        pos[k] = next++;
        for (size_t s : succ[k])
            if (--indeg[s] == 0)
                ready.push_back(s);
    }
    if (next != n)
        die("the workflow has a cycle");
    return pos;
}

/* The largest power of two p with max * p <= limit (at least 1 if max is 0). */
double pow2_scale(double max, double limit)
{
    if (!(max > 0))
        return 1.0;
    int e;
    std::frexp(limit / max, &e);
    return std::ldexp(1.0, e - 1);
}

double now_s()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

} // namespace

int main(int argc, char* argv[])
{
    double t0 = now_s();
    /* The transfer model: exactly L + size / B per transfer; a --cfg= on the
     * command line overrides these (to see what the defaults would do). */
    static const char* const model_cfg[] = {"network/model:CM02",         "network/TCP-gamma:0",
                                            "network/crosstraffic:0",     "network/latency-factor:1",
                                            "network/bandwidth-factor:1", "surf/precision:1e-12"};
    std::vector<std::string> given;
    for (int a = 1; a < argc; a++) {
        if (std::strcmp(argv[a], "-h") == 0 || std::strcmp(argv[a], "--help") == 0) {
            /* before the Engine, whose --help lists its own options */
            std::printf("usage: flow_dag [--speeds S0,S1,...] [--latency L] [--bandwidth B]\n"
                        "                [--links fatpipe|single|shared] [--comms lazy|eager]\n"
                        "                [--tasks-out FILE]\n"
                        "                WORKFLOW.json SCHEDULE.json [--cfg=... --log=...]\n"
                        "Replays a `tenbin flow simulate --json` schedule on SimGrid (see flow_dag.cpp).\n");
            return 0;
        }
        if (std::strncmp(argv[a], "--cfg=", 6) == 0)
            given.emplace_back(argv[a] + 6, std::strcspn(argv[a] + 6, ":"));
    }
    xbt_log_control_set("xbt_cfg.thres:warning");
    sg4::Engine e(&argc, argv); /* takes the --cfg= and --log= arguments out */
    for (const char* c : model_cfg)
        if (std::find(given.begin(), given.end(), std::string(c, std::strcspn(c, ":"))) == given.end())
            sg4::Engine::set_config(c);

    std::vector<double> speeds;
    double lat = 0, bw = INFINITY;
    std::string links = "fatpipe", tasks_out;
    bool lazy = true;
    std::vector<std::string> pos;
    for (int a = 1; a < argc; a++) {
        std::string arg = argv[a];
        auto value      = [&]() -> const char* {
            if (a + 1 >= argc)
                die(arg + ": needs a value");
            return argv[++a];
        };
        if (arg == "--speeds")
            speeds = parse_list(value());
        else if (arg == "--latency")
            lat = parse_number("--latency", value());
        else if (arg == "--bandwidth")
            bw = parse_number("--bandwidth", value());
        else if (arg == "--links")
            links = value();
        else if (arg == "--comms") {
            std::string v = value();
            if (v != "lazy" && v != "eager")
                die("--comms: lazy or eager");
            lazy = v == "lazy";
        } else if (arg == "--tasks-out")
            tasks_out = value();
        else if (arg.size() > 1 && arg[0] == '-')
            die("unknown option " + arg);
        else
            pos.push_back(arg);
    }
    if (pos.size() != 2)
        die("usage: flow_dag [options] WORKFLOW.json SCHEDULE.json (--help)");
    if (links != "fatpipe" && links != "single" && links != "shared")
        die("--links: fatpipe, single or shared");
    if (!(bw > 0))
        die("--bandwidth: must be positive (inf: no bandwidth term)");

    Workflow w = read_workflow(pos[0]);
    Schedule s = read_schedule(pos[1], w);
    if (speeds.empty())
        speeds = s.speeds;
    if (speeds.empty())
        die(pos[1] + " has no \"hosts\": give --speeds");
    size_t n = w.id.size(), nh = speeds.size();
    for (size_t k = 0; k < n; k++)
        if (static_cast<size_t>(s.host[k]) >= nh)
            die("task '" + w.id[k] + "' is on host " + std::to_string(s.host[k]) + ", the platform has " +
                std::to_string(nh));
    double t_read = now_s();

    /* Scales: flops up to about 2^50 per task, bytes up to 2^52 per transfer
     * (integers, exact in a double), so that maxmin/precision is far below
     * one unit of a rate and the rounding of payloads is below 2^-52. */
    double max_work = 0, max_data = 0;
    for (double x : w.work)
        max_work = std::max(max_work, x);
    for (const Edge& ed : w.edges)
        max_data = std::max(max_data, ed.data);
    double fscale = pow2_scale(std::max(max_work, *std::max_element(speeds.begin(), speeds.end())), 0x1p50);
    double bscale = std::isfinite(bw) ? pow2_scale(std::max(max_data, bw), 0x1p52) : 0.0;

    /* Platform. */
    auto* zone = sg4::create_full_zone("world");
    std::vector<sg4::Host*> hosts(nh);
    for (size_t h = 0; h < nh; h++)
        hosts[h] = zone->create_host("h" + std::to_string(h), speeds[h] * fscale)->seal();
    double link_bw = std::isfinite(bw) ? bw * bscale : 1e30; /* with B = inf, payloads are 0 */
    auto route = [&](size_t a, size_t b, sg4::Link* l) {
        zone->add_route(hosts[a]->get_netpoint(), hosts[b]->get_netpoint(), nullptr, nullptr,
                        {sg4::LinkInRoute(l)}, false);
    };
    auto policy = links == "shared" ? sg4::Link::SharingPolicy::SHARED : sg4::Link::SharingPolicy::FATPIPE;
    sg4::Link* one = nullptr;
    if (links == "single")
        one = zone->create_link("net", link_bw)->set_latency(lat)->set_sharing_policy(policy)->seal();
    for (size_t a = 0; a < nh; a++)
        for (size_t b = 0; b < nh; b++) {
            if (a == b)
                continue;
            sg4::Link* l = one;
            if (l == nullptr)
                l = zone->create_link("l" + std::to_string(a) + "_" + std::to_string(b), link_bw)
                        ->set_latency(lat)
                        ->set_sharing_policy(policy)
                        ->seal();
            route(a, b, l);
        }
    zone->seal();

    /* Activities: one Exec per task, one Comm per edge between hosts. */
    std::vector<sg4::ExecPtr> exec(n);
    std::unordered_map<const sg4::Activity*, size_t> task_of;
    for (size_t k = 0; k < n; k++) {
        exec[k] = sg4::Exec::init();
        exec[k]->set_name(w.id[k]);
        exec[k]->set_flops_amount(w.work[k] * fscale);
        exec[k]->set_host(hosts[s.host[k]]);
        task_of[exec[k].get()] = k;
    }
    std::vector<sg4::CommPtr> comms;
    auto make_comm = [&](const Edge& ed) {
        auto c = sg4::Comm::sendto_init(hosts[s.host[ed.from]], hosts[s.host[ed.to]]);
        c->set_name(w.id[ed.from] + "->" + w.id[ed.to]);
        c->set_payload_size(static_cast<uint64_t>(std::llround(ed.data * bscale)));
        c->add_successor(exec[ed.to]);
        comms.push_back(c);
        return c;
    };
    std::vector<std::vector<size_t>> remote(n); /* lazy: edges to other hosts, by parent */
    for (size_t i = 0; i < w.edges.size(); i++) {
        const Edge& ed = w.edges[i];
        if (s.host[ed.from] == s.host[ed.to] || lazy) {
            /* lazy: the child waits for the parent until the parent's end
             * gives it the transfer to wait for */
            exec[ed.from]->add_successor(exec[ed.to]);
            if (s.host[ed.from] != s.host[ed.to])
                remote[ed.from].push_back(i);
        } else
            exec[ed.from]->add_successor(make_comm(ed));
    }
    if (lazy)
        /* Fired by complete() before the successors are released. */
        sg4::Activity::on_completion_cb([&](const sg4::Activity& a) {
            auto it = task_of.find(&a);
            if (it == task_of.end() || a.get_state() != sg4::Activity::State::FINISHED)
                return;
            for (size_t i : remote[it->second])
                make_comm(w.edges[i])->start();
        });
    /* One task at a time per host, in the schedule's order: by start, then
     * finish (a zero-length task before a longer one starting with it), then
     * topological position (zero-length tasks that depend on each other). */
    std::vector<size_t> topo = topo_positions(w), order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (s.host[a] != s.host[b])
            return s.host[a] < s.host[b];
        if (s.start[a] != s.start[b])
            return s.start[a] < s.start[b];
        if (s.finish[a] != s.finish[b])
            return s.finish[a] < s.finish[b];
        return topo[a] < topo[b];
    });
    size_t chained = 0;
    for (size_t i = 1; i < n; i++) {
        size_t a = order[i - 1], b = order[i];
        if (s.host[a] != s.host[b])
            continue;
        const auto& succ = exec[a]->get_successors();
        bool have = std::any_of(succ.begin(), succ.end(), [&](const sg4::ActivityPtr& x) { return x.get() == exec[b].get(); });
        if (!have) {
            exec[a]->add_successor(exec[b]);
            chained++;
        }
    }
    double t_build = now_s();

    /* Start the activities without predecessors; the others start when their
     * last dependency completes. */
    for (size_t k = 0; k < n; k++)
        if (exec[k]->dependencies_solved())
            exec[k]->start();
    e.run();
    double t_run = now_s();

    double makespan = 0, first = INFINITY, max_dev = 0;
    size_t unfinished = 0;
    std::FILE* tf = tasks_out.empty() ? nullptr : std::fopen(tasks_out.c_str(), "w");
    if (!tasks_out.empty() && tf == nullptr)
        die(tasks_out + ": cannot write");
    for (size_t k = 0; k < n; k++) {
        if (exec[k]->get_state() != sg4::Activity::State::FINISHED) {
            unfinished++;
            continue;
        }
        double st = exec[k]->get_start_time(), fi = exec[k]->get_finish_time();
        makespan  = std::max(makespan, fi);
        first     = std::min(first, st);
        max_dev   = std::max(max_dev, std::fabs(st - s.start[k]));
        if (tf)
            std::fprintf(tf, "%s\t%d\t%.17g\t%.17g\n", w.id[k].c_str(), s.host[k], st, fi);
    }
    for (const auto& c : comms)
        if (c->get_state() == sg4::Activity::State::FINISHED)
            makespan = std::max(makespan, c->get_finish_time());
        else
            unfinished++;
    if (tf)
        std::fclose(tf);
    if (unfinished)
        die(std::to_string(unfinished) + " activities never ran (a dependency cycle: the schedule's host order "
                                         "contradicts the workflow?)");
    std::printf("{\"makespan\": %.17g, \"first_start\": %.17g, \"tasks\": %zu, \"edges\": %zu, \"comms\": %zu, "
                "\"chained\": %zu, \"hosts\": %zu, \"links\": \"%s\", \"comm_mode\": \"%s\", \"max_start_dev\": %.3g, "
                "\"read_s\": %.4f, \"build_s\": %.4f, \"run_s\": %.4f}\n",
                makespan, first, n, w.edges.size(), comms.size(), chained, nh, links.c_str(), lazy ? "lazy" : "eager", max_dev,
                t_read - t0, t_build - t_read, t_run - t_build);
    return 0;
}
