import { defineConfig } from 'vitest/config';

/**
 * Unit tests run once; the flow tests (integration and end to end) run on both stores, the embedded
 * memory store and the Redis this machine kind starts at 127.0.0.1:6379 (D14, issue: production store).
 */
const flows = ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // issue 21, D17: every log line of the run is kept and checked for secrets after it (test/logCapture.ts);
    // test/tlsTrust.ts: the test CA of the service's TLS front, trusted by the run's processes
    globalSetup: ['test/redisReachable.ts', 'test/logCapture.ts', 'test/tlsTrust.ts'],
    // the JSON report lets .ci/run print a plain "N passed, N failed" closing line
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'flows-memory', include: flows, env: { TEST_STORE: 'memory' } } },
      { extends: true, test: { name: 'flows-redis', include: flows, exclude: ['test/integration/store-contract.test.ts'], env: { TEST_STORE: 'redis' } } },
    ],
  },
});
