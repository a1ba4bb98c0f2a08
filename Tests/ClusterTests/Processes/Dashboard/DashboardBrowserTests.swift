import Foundation
import ShiftworkTestSupport
import XCTest

/// The dashboard in a real headless browser (Debian's chromium, driven over the DevTools protocol by
/// `Resources/headless-browser.py`): a coordinator, a worker and a batch (real processes); what the page
/// shows is checked against `shiftwork status --json`; a hostile source stays text; the page reconnects
/// by itself after the coordinator restarts. Screenshots go to `$SHIFTWORK_DASHBOARD_SCREENSHOTS` (or a
/// temporary directory, printed), for docs/images.
final class DashboardBrowserTests: XCTestCase {
    static let chromium = "/usr/bin/chromium"

    /// The photos in samples/ (repository root), served over HTTP.
    private func samples() throws -> [(name: String, bytes: [UInt8])] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try ["coffee.jpg", "rocket.jpg", "chelsea.png"].map { name in
            (name, [UInt8](try Data(contentsOf: root.appendingPathComponent("samples/\(name)"))))
        }
    }

    /// The lines `eval: JSON` the browser printed, parsed, in order.
    private func evaluations(_ output: String) -> [Any] {
        output.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "eval: ") else { return nil }
            return try? JSONSerialization.jsonObject(
                with: Data(line[range.upperBound...].utf8), options: .fragmentsAllowed)
        }
    }

    func testThePageShowsWhatStatusReportsAndReconnectsAfterARestart() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.chromium) else {
            throw XCTSkip("chromium is not installed (scripts/setup-browser installs it)")
        }
        let script = try XCTUnwrap(
            Bundle.module.url(forResource: "headless-browser", withExtension: "py"),
            "headless-browser.py is missing from the ClusterTests bundle (see its resources in Package.swift)")
        let shots = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["SHIFTWORK_DASHBOARD_SCREENSHOTS"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-dashboard-screenshots").path
        )
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let harness = try ClusterHarness()
        let server = try TestHTTPServer()
        do {
            let state = harness.scratch.appendingPathComponent("state").path
            var coordinator = try harness.launch(
                "coordinator",
                [
                    "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
                    "--http-listen", "127.0.0.1:0", "--data-dir", state,
                ])
            let endpointLine = await coordinator.waitForLine { $0.contains("coordinator listening on ") }
            let dashboardLine = await coordinator.waitForLine { $0.hasPrefix("dashboard on ") }
            let endpoint = try XCTUnwrap(
                endpointLine?.components(separatedBy: "listening on ").last, coordinator.outputText)
            let base = try XCTUnwrap(
                dashboardLine?.components(separatedBy: "dashboard on ").last?.trimmingCharacters(in: .whitespaces)
                    .trimmingCharacters(in: CharacterSet(charactersIn: "/")), coordinator.outputText)
            _ = try harness.launch(
                "w-dash",
                ["worker", "--slots", "2", "--worker-id", "w-dash", "--coordinator", endpoint, "--allow-local-files"])
            var urls: [String] = []
            for sample in try samples() {
                server.serve(
                    path: "/photos/\(sample.name)", body: sample.bytes,
                    contentType: sample.name.hasSuffix(".png") ? "image/png" : "image/jpeg")
                urls.append(server.url("/photos/\(sample.name)"))
            }
            let hostile = harness.scratch.appendingPathComponent(
                #"x"><img src=x onerror="document.title='pwned'">.jpg"#
            ).path
            let (status, output) = try await harness.run(
                ["submit"] + urls + [
                    hostile, "--out", harness.scratch.appendingPathComponent("out").path,
                    "--coordinator", endpoint,
                ])
            XCTAssertEqual(status, 1, output)  // one item failed
            let cluster = try await harness.status(endpoint)
            let batchID = try XCTUnwrap(cluster.objects("batches").first?["id"] as? String, "\(cluster)")
            let batch = try await harness.status(endpoint, batch: batchID)
            let items = try XCTUnwrap(batch.objects("batches").first?.objects("item_states"))

            // /api/status is status --json (but for the figures that move with time).
            let api = try await TestHTTPClient.get(base + "/api/status")
            XCTAssertEqual(api.status, 200)
            var served = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(api.body)) as? [String: Any])
            var expected = cluster
            for key in ["tasks_per_second", "workers"] {
                served[key] = nil
                expected[key] = nil
            }
            XCTAssertEqual(NSDictionary(dictionary: served), NSDictionary(dictionary: expected))

            let rows = "(sel) => [...document.querySelectorAll(sel)].map((r) => [...r.cells].map((c) => c.textContent))"
            let restarted = harness.scratch.appendingPathComponent("restarted").path
            let browser = try harness.launch(
                "browser", executable: URL(fileURLWithPath: "/usr/bin/env"),
                [
                    "python3", script.path, Self.chromium,
                    "size", "1280x860", "open", base + "/",
                    "wait",
                    "!!document.querySelector('[data-batch-id]') && document.getElementById('connection').textContent === 'live'",
                    "eval",
                    "JSON.stringify({coordinator: document.getElementById('coordinator').textContent, cards: Object.fromEntries([...document.querySelectorAll('#cluster-cards [data-key]')].map((c) => [c.dataset.key, c.querySelector('.value').textContent])), workers: [...document.querySelectorAll('[data-worker-id]')].map((r) => r.dataset.workerId), batches: (\(rows))('#batches tbody tr[data-batch-id]')})",
                    "screenshot", shots.appendingPathComponent("dashboard.png").path,
                    "open", base + "/batches/\(batchID)",
                    "wait",
                    "document.querySelectorAll('#items tr[data-index]').length === \(items.count) && [...document.querySelectorAll('img.thumb')].every((i) => i.complete && i.naturalWidth > 0)",
                    "eval",
                    "JSON.stringify({items: [...document.querySelectorAll('#items tr[data-index]')].map((r) => ({index: Number(r.dataset.index), state: r.dataset.state, source: r.querySelector('td.source').textContent, error: r.querySelector('td.error').textContent})), thumbs: document.querySelectorAll('img.thumb').length, injected: document.querySelectorAll('[onerror], img[src=x]').length, title: document.title})",
                    "dump", harness.scratch.appendingPathComponent("batch.html").path,
                    // The batch's event stream itself: every item in the first event, then only those that changed.
                    "eval",
                    "(async () => { const response = await fetch('/api/events?batch=\(batchID)'); const reader = response.body.getReader(); const decoder = new TextDecoder(); const events = []; let text = ''; while (events.length < 2) { const { value, done } = await reader.read(); if (done) break; text += decoder.decode(value, { stream: true }); let end; while ((end = text.indexOf('\\n\\n')) >= 0) { const block = text.slice(0, end); text = text.slice(end + 2); if (block.startsWith('data: ')) events.push(JSON.parse(block.slice(6))); } } reader.cancel(); return JSON.stringify({events: events.map((e) => ({items: e.batch.item_states.length, complete: e.batch.item_states_complete}))}); })()",
                    "screenshot", shots.appendingPathComponent("dashboard-batch.png").path,
                    "size", "390x844", "screenshot", shots.appendingPathComponent("dashboard-phone.png").path,
                    "size", "1280x860", "open", base + "/",
                    "wait", "document.getElementById('connection').textContent === 'live'",
                    "say", "ready for the restart", "waitfile", restarted,
                    "wait",
                    "document.querySelectorAll('[data-batch-id]').length === 2 && document.getElementById('connection').textContent === 'live'",
                    "eval",
                    "JSON.stringify({coordinator: document.getElementById('coordinator').textContent, batches: (\(rows))('#batches tbody tr[data-batch-id]')})",
                ])
            let ready = await browser.waitForLine(timeout: .seconds(120)) {
                $0.contains("ready for the restart") || $0.contains("step failed")
            }
            XCTAssertEqual(ready, "ready for the restart", browser.outputText)

            // The coordinator restarts on the same ports and data directory; a second batch runs there.
            _ = await coordinator.stop()
            let httpPort = try XCTUnwrap(base.split(separator: ":").last.map(String.init))
            coordinator = try harness.launch(
                "coordinator-2",
                [
                    "coordinator", "--listen", endpoint, "--insecure",
                    "--http-listen", "127.0.0.1:\(httpPort)", "--data-dir", state,
                ])
            let again = await coordinator.waitForLine { $0.hasPrefix("dashboard on ") }
            XCTAssertNotNil(again, coordinator.outputText)
            let (secondStatus, secondOutput) = try await harness.run([
                "submit", urls[0], "--out", harness.scratch.appendingPathComponent("out2").path,
                "--coordinator", endpoint,
            ])
            XCTAssertEqual(secondStatus, 0, secondOutput)
            _ = FileManager.default.createFile(atPath: restarted, contents: nil)
            let exit = await browser.waitForExit(timeout: .seconds(120))
            XCTAssertEqual(exit, 0, browser.outputText)
            let results = evaluations(browser.outputText).compactMap {
                ($0 as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            }
            XCTAssertEqual(results.count, 4, browser.outputText)
            guard results.count == 4 else {
                throw HarnessError("the browser did not finish:\n\(browser.outputText)\n\(harness.allOutput)")
            }

            // The cluster page: the cards, workers and batches that status reports.
            let cards = try XCTUnwrap(results[0]["cards"] as? [String: String])
            XCTAssertEqual(cards["workers"], String(cluster.objects("workers").count))
            XCTAssertEqual(cards["completed_tasks"], String(cluster.int("completed_tasks")))
            XCTAssertEqual(cards["failed_tasks"], String(cluster.int("failed_tasks")))
            XCTAssertEqual(cards["queued_tasks"], String(cluster.int("queued_tasks")))
            XCTAssertEqual(
                results[0]["workers"] as? [String], cluster.objects("workers").map { $0["id"] as? String ?? "?" })
            let batchRows = try XCTUnwrap(results[0]["batches"] as? [[String]])
            XCTAssertEqual(
                batchRows.map { [$0[0], $0[2], $0[3], $0[4]] },
                cluster.objects("batches").map {
                    ["\($0["id"] ?? "")", "\($0.int("items"))", "\($0.int("succeeded"))", "\($0.int("failed"))"]
                })

            // The batch page: every item with the state, source and error status reports; previews of
            // the successes; the hostile source as text.
            let shown = try XCTUnwrap(results[1]["items"] as? [[String: Any]])
            XCTAssertEqual(shown.count, items.count)
            for (row, item) in zip(shown, items) {
                XCTAssertEqual(row["index"] as? Int, item.int("index"))
                XCTAssertEqual(row["state"] as? String, item["state"] as? String)
                XCTAssertEqual(row["source"] as? String, item["source"] as? String)
                XCTAssertEqual(row["error"] as? String, item["error"] as? String)
            }
            XCTAssertEqual(results[1]["thumbs"] as? Int, items.filter { $0["state"] as? String == "succeeded" }.count)
            XCTAssertEqual(items.filter { $0["state"] as? String == "succeeded" }.count, 3, "\(items)")
            XCTAssertTrue(shown.contains { ($0["source"] as? String) == hostile }, "\(shown)")
            XCTAssertEqual(results[1]["injected"] as? Int, 0)
            XCTAssertEqual(results[1]["title"] as? String, "\(batchID) · Shiftwork")
            let dom = try String(
                contentsOfFile: harness.scratch.appendingPathComponent("batch.html").path, encoding: .utf8)
            XCTAssertFalse(dom.contains("<img src=\"x\""), dom)
            XCTAssertTrue(dom.contains("&lt;img src=x onerror="), dom)

            // The finished batch's stream: all its items once, then none (nothing changed).
            let events = try XCTUnwrap(results[2]["events"] as? [[String: Any]], "\(results[2])")
            XCTAssertEqual(events.map { $0["items"] as? Int }, [items.count, 0], "\(events)")
            XCTAssertEqual(events.map { $0["complete"] as? Bool }, [true, false], "\(events)")

            // After the restart: the same page, reconnected by itself, shows the new coordinator and batch.
            XCTAssertNotEqual(results[3]["coordinator"] as? String, results[0]["coordinator"] as? String)
            XCTAssertTrue((results[0]["coordinator"] as? String ?? "").hasPrefix("coordinator-"), "\(results[0])")
            XCTAssertEqual((results[3]["batches"] as? [[String]])?.count, 2)
            print("dashboard screenshots in \(shots.path)")
        } catch {
            server.shutdown()
            await harness.stopAll()
            throw error
        }
        server.shutdown()
        await harness.stopAll()
    }
}
