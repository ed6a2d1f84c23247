import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LOG_CAPTURE_ENV } from '../src/log.js';
import { knownNeedles, leakFinder } from './helpers/logSecrets.js';

/**
 * Issue 21, D17: every log line of the test run, checked for secrets.
 *
 * The choice: the check has to see what the services really write, in every test file and in every
 * process (tests start the service as child processes too), including services whose tests made them
 * silent. So this global setup names a file in VC_LOG_CAPTURE, which the test workers and every process
 * they start inherit; src/log.ts's createLogger appends every line at debug to it besides its own
 * destination (in production the variable is unset and nothing changes). After the last test file, the
 * whole file is searched for the secrets known before the run (test/helpers/logSecrets.ts: config/demo.yaml's
 * client, webhook and identity provider secrets, the test clients' secrets, the PINs and attribute values of
 * the log-secret journey). A find fails the run: vitest ignores errors thrown by a global teardown, so the
 * teardown prints each offending line and sets the exit code. The values a journey makes (hints, codes,
 * tokens, ContinuationContext) are known only inside its test: test/e2e/log-secrets.test.ts checks those
 * against the lines of its own service, as a test that fails.
 *
 * vitest calls a global setup once per project and once for the root config: the first call owns the file.
 */
export default function setup(): () => Promise<void> {
  if (process.env[LOG_CAPTURE_ENV]) return async () => undefined;
  const dir = mkdtempSync(join(tmpdir(), 'vc-log-capture-'));
  const file = join(dir, 'log.jsonl');
  process.env[LOG_CAPTURE_ENV] = file;
  return async () => {
    try {
      if (!existsSync(file)) return;
      const find = leakFinder(await knownNeedles());
      const found: string[] = [];
      let lines = 0;
      for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
        lines += 1;
        if (found.length < 50) found.push(...find(line));
      }
      if (found.length) {
        console.error(
          `\nD17: log lines of this test run carry secrets (${lines} lines checked; test/logCapture.ts):\n${found.join('\n')}\n`,
        );
        process.exitCode = 1;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
