import CoreMetrics
import Prometheus

/// A swift-metrics backend that records into one `PrometheusCollectorRegistry` and gives each metric
/// the help text `help` lists for its name.
///
/// swift-prometheus' `PrometheusMetricsFactory` registers every metric without help (swift-metrics has
/// no place for it), and a registry refuses one name registered with two help texts; so counters and
/// gauges are made here through the registry's own API, with their help. Timers and aggregating
/// recorders (histograms) are left to `PrometheusMetricsFactory` unchanged.
///
/// Not bootstrapped into the process-wide `MetricsSystem`: each coordinator passes its own factory to the
/// metrics it makes, so that several coordinators in one process (tests, `EmbeddedCluster`) keep
/// separate registries.
struct DescribedPrometheusFactory: MetricsFactory {
    /// Where the metrics are recorded, and rendered from.
    let registry: PrometheusCollectorRegistry
    /// Help texts by metric name; a name missing here gets no `# HELP` line.
    let help: [String: String]
    private let histograms: PrometheusMetricsFactory

    init(registry: PrometheusCollectorRegistry, help: [String: String]) {
        self.registry = registry
        self.help = help
        self.histograms = PrometheusMetricsFactory(registry: registry)
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard !aggregate else { return histograms.makeRecorder(label: label, dimensions: dimensions, aggregate: true) }
        return registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        histograms.makeTimer(label: label, dimensions: dimensions)
    }

    /// The name as it is (no namespace or unit appended), with its help.
    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: help[label] ?? "")
    }

    func destroyCounter(_ handler: any CounterHandler) { histograms.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        histograms.destroyFloatingPointCounter(handler)
    }
    func destroyRecorder(_ handler: any RecorderHandler) { histograms.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { histograms.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { histograms.destroyTimer(handler) }
}
