import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCert } from './helpers/pki.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

/**
 * The relying-party recipes run against the service behind TLS (test/helpers/tlsFront.ts), as operators
 * run it. This global setup makes, once per run, a test CA and the front's certificate (for 127.0.0.1 and
 * localhost) in TEST_TLS_DIR, and has the run trust the CA: Node reads NODE_EXTRA_CA_CERTS only when a
 * process starts, so it is set here, before the test processes start; it reaches them and the processes
 * they start (the Node recipes). Python's requests and Apache are told by their tests (REQUESTS_CA_BUNDLE,
 * OIDCCABundlePath). Trust is configured; no library's checks are changed.
 */
export default async function setup(): Promise<(() => void) | void> {
  if (process.env.TEST_TLS_DIR) return; // once per run, whichever project comes first
  const ca = await makeCert({ subject: 'CN=Relying-party recipes test CA', ca: true, pathLength: 0 });
  const leaf = await makeCert({
    subject: 'CN=localhost',
    issuer: ca,
    eku: [SERVER_AUTH],
    san: [
      { type: 'ip', value: '127.0.0.1' },
      { type: 'dns', value: 'localhost' },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'vc-tls-'));
  writeFileSync(join(dir, 'ca.pem'), ca.pem);
  writeFileSync(join(dir, 'cert.pem'), leaf.pem);
  const key = createPrivateKey({ key: leaf.privateJwk as never, format: 'jwk' });
  writeFileSync(join(dir, 'key.pem'), key.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  // what the environment already trusted stays trusted
  const before = process.env.NODE_EXTRA_CA_CERTS ? readFileSync(process.env.NODE_EXTRA_CA_CERTS, 'utf8') : '';
  writeFileSync(join(dir, 'trust.pem'), `${before}\n${ca.pem}`);
  process.env.NODE_EXTRA_CA_CERTS = join(dir, 'trust.pem');
  process.env.TEST_TLS_DIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
