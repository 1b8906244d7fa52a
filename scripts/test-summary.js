// Prints the plain closing line CI reads ("N passed, N failed") from Vitest's JSON report.
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? "artifacts/test-results.json";
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.error(`test-summary: cannot read ${file}: ${error.message}`);
  process.exit(1);
}
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(
  `${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`,
);
process.exit(report.numTotalTests > 0 && report.numFailedTests === 0 ? 0 : 1);
