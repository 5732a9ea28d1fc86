// The thresholds the dashboard draws on its charts and weighs in a card's status: those of the
// daemon's built-in rules (docs/rules.md, "Built-in defaults": gpu_temperature_high fires above
// 80 °C, gpu_memory_high above 90 % of the memory). The API does not report the rules a daemon
// runs (a --rules file may set others); the alerts it reports are always shown as they are.

export const kThresholds = {
  temperatureC: { value: 80, rule: 'gpu_temperature_high' },
  memoryRatio: { value: 0.9, rule: 'gpu_memory_high' },
};

// The smallest span each chart's y axis shows, so that noise does not fill a chart: temperature
// at least 30..90 °C (and 5 °C beyond the data), utilization 0..100 %, memory 0..the largest
// total shown, power 0..the largest limit shown.
export const kTemperatureSpanC = [30, 90];

// The diagnoser's starved GPU (DiagnosisOptions, src/analysis/diagnoses/diagnoses.h): utilization
// under 30 % while a process holds at least 1 GiB, diagnosed after 5 min of it.
export const kStarved = { utilization: 0.3, minBytes: 1024 ** 3, forSeconds: 300 };
