#include "analysis/rules/engine.h"

#include <set>
#include <utility>

#include "analysis/rules/message.h"

namespace gpuwatch::rules {

namespace {

// How much counter `id` of `dev` grew since its previous reading (kept in
// `last` by device index); N/A until two readings exist. A counter that went
// back (driver reload, gpuwatch restart in a replay) is not an increase.
std::optional<double> Increase(const DeviceSample& dev, FieldId id, std::map<int, double>& last) {
  const Reading& r = dev.fields[id];
  if (!r.is_number()) return std::nullopt;
  std::optional<double> out;
  if (auto it = last.find(dev.index); it != last.end()) {
    out = std::max(0.0, r.number() - it->second);
  }
  last[dev.index] = r.number();
  return out;
}

}  // namespace

FieldMask FieldsRead(const RuleSet& rules) {
  FieldMask m;
  for (const Rule& rule : rules.rules) {
    auto add = [&m](const FieldRef& f) { m |= SourceFields(f); };
    rule.condition.ForEachField(add);
    rule.clear.ForEachField(add);
    m |= TemplateFields(rule.message, rule.scope);
  }
  return m;
}

RuleEngine::RuleEngine(RuleSet rules) : rules_(std::move(rules)) {}

std::vector<Event> RuleEngine::Evaluate(const Snapshot& snapshot) {
  ++tick_;
  std::vector<Event> events;
  std::vector<DerivedValues> derived(snapshot.devices.size());
  for (std::size_t i = 0; i < snapshot.devices.size(); ++i) {
    const DeviceSample& dev = snapshot.devices[i];
    derived[i].ecc_uncorrected_increase =
        Increase(dev, FieldId::kEccErrorsUncorrectedVolatile, last_ecc_uncorrected_);
    derived[i].xid_errors = Increase(dev, FieldId::kXidErrorsTotal, last_xid_total_);
  }
  for (std::size_t r = 0; r < rules_.rules.size(); ++r) {
    const Rule& rule = rules_.rules[r];
    for (std::size_t i = 0; i < snapshot.devices.size(); ++i) {
      const DeviceSample& dev = snapshot.devices[i];
      EvalContext ctx{.device = &dev, .process = nullptr, .derived = &derived[i]};
      if (rule.scope == RuleScope::kDevice) {
        Step(Key{r, dev.index, std::nullopt}, ctx, snapshot.time, &events);
        continue;
      }
      for (const ProcessSample& p : dev.processes) {
        ctx.process = &p;
        Step(Key{r, dev.index, ProcessKey{p.pid, p.host.start_ticks}}, ctx, snapshot.time, &events);
      }
    }
  }
  ForgetEndedProcesses(snapshot, &events);
  return events;
}

void RuleEngine::Step(const Key& key, const EvalContext& ctx,
                      std::chrono::system_clock::time_point now, std::vector<Event>* events) {
  const Rule& rule = rules_.rules[key.rule];
  auto it = states_.find(key);
  if (it == states_.end()) {
    if (rule.condition.Evaluate(ctx) != Truth::kTrue) return;
    State fresh;
    fresh.since = now;
    it = states_.emplace(key, std::move(fresh)).first;
  }
  State& st = it->second;
  st.seen = tick_;
  st.value = ValueOf(rule.condition.PrimaryField(), ctx);
  switch (st.phase) {
    case Phase::kPending:
      if (rule.condition.Evaluate(ctx) != Truth::kTrue) {
        states_.erase(it);
        return;
      }
      if (now - st.since >= rule.for_duration) {
        st.phase = Phase::kFiring;
        st.fired_at = now;
        st.message = Render(rule, ctx);
        events->push_back(MakeEvent(key, Event::Kind::kAlertFiring, now, st));
      }
      return;
    case Phase::kFiring:
    case Phase::kClearing:
      if (rule.clear.Evaluate(ctx) != Truth::kTrue) {
        st.phase = Phase::kFiring;
        return;
      }
      if (st.phase == Phase::kFiring) {
        st.phase = Phase::kClearing;
        st.since = now;
      }
      if (now - st.since >= rule.clear_for) {
        st.message = "resolved: " + Render(rule, ctx);
        events->push_back(MakeEvent(key, Event::Kind::kAlertResolved, now, st));
        states_.erase(it);
      }
      return;
  }
}

void RuleEngine::ForgetEndedProcesses(const Snapshot& snapshot, std::vector<Event>* events) {
  // Only a healthy device's process list says that a process has ended; a
  // lost device's empty list says nothing.
  std::set<int> healthy;
  for (const DeviceSample& dev : snapshot.devices) {
    if (dev.health == DeviceHealth::kOk) healthy.insert(dev.index);
  }
  for (auto it = states_.begin(); it != states_.end();) {
    const Key& key = it->first;
    State& st = it->second;
    if (!key.process || st.seen == tick_ || !healthy.contains(key.gpu)) {
      ++it;
      continue;
    }
    if (st.phase != Phase::kPending) {
      st.message = "resolved: " + st.message + " (process ended)";
      events->push_back(MakeEvent(key, Event::Kind::kAlertResolved, snapshot.time, st));
    }
    it = states_.erase(it);
  }
}

Event RuleEngine::MakeEvent(const Key& key, Event::Kind kind,
                            std::chrono::system_clock::time_point now, const State& state) const {
  const Rule& rule = rules_.rules[key.rule];
  Event e;
  e.time = now;
  e.kind = kind;
  e.severity = rule.severity;
  e.source = rule.name;
  e.gpu = key.gpu;
  e.process = key.process;
  e.value = state.value;
  e.message = state.message;
  return e;
}

std::vector<ActiveAlert> RuleEngine::ActiveAlerts() const {
  std::vector<ActiveAlert> out;
  for (const auto& [key, st] : states_) {
    if (st.phase == Phase::kPending) continue;
    const Rule& rule = rules_.rules[key.rule];
    out.push_back(ActiveAlert{.rule = rule.name,
                              .severity = rule.severity,
                              .gpu = key.gpu,
                              .process = key.process,
                              .since = st.fired_at,
                              .value = st.value,
                              .message = st.message});
  }
  return out;
}

}  // namespace gpuwatch::rules
