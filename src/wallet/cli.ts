#!/usr/bin/env node
import { pathToFileURL } from 'node:url';
import { readFile } from 'node:fs/promises';
import { decodeJwt } from 'jose';
import { readPemCertificates } from './certificates.js';
import { DevWallet, WalletError, type StoredCredential } from './holder.js';
import { DEFAULT_WALLET_FILE } from './walletFile.js';

const USAGE = `usage:
  npm run wallet -- receive <offer-uri> [--pin 1234] [--format mso_mdoc] [--issuer-trust CA.pem] [--wallet FILE]
  npm run wallet -- list [--wallet FILE]
  npm run wallet -- present <openid4vp-uri> [--trust CA.pem] [--wallet FILE]
  npm run wallet -- import-mdoc <mdoc.json> [--wallet FILE]
The wallet file defaults to ${DEFAULT_WALLET_FILE}. --trust names the CA certificates (PEM) of the verifiers
to answer; npm start prints the one it made (keys/verifier-ca.pem). --issuer-trust names the CA
certificates (PEM) of issuers whose x5c chains vouch for their credentials (e.g. keys/issuer-ca.pem),
and of the IACAs over mdoc document signers; without it an x5c chain is checked, and its key must be one
the issuer publishes (an mdoc's signature and chain are checked, unanchored). The mdoc file is JSON:
{ "issuerSigned": "<base64url IssuerSigned>", "doctype": "...", "deviceKey": <private P-256 JWK> }.`;

export class UsageError extends Error {}

export interface CliCommand {
  command: 'receive' | 'list' | 'present' | 'import-mdoc' | 'help';
  offerUri?: string;
  /** present: the OpenID4VP request link (`openid4vp://?client_id=...&request_uri=...`) */
  requestUri?: string;
  pin?: string;
  /** receive: `mso_mdoc` takes the offer's ISO mdoc configuration (default: its first, an SD-JWT VC) */
  format?: 'mso_mdoc';
  /** present: a PEM file of the CA certificates whose verifiers to answer */
  trust?: string;
  /** receive: a PEM file of the CA certificates that vouch for issuers (their x5c) */
  issuerTrust?: string;
  /** import-mdoc: the JSON file with issuerSigned, doctype and deviceKey */
  mdocFile?: string;
  wallet: string;
}

export function parseArgs(argv: string[]): CliCommand {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h')
    return { command: 'help', wallet: DEFAULT_WALLET_FILE };
  if (command !== 'receive' && command !== 'list' && command !== 'present' && command !== 'import-mdoc')
    throw new UsageError(`unknown command ${command}`);
  const positional: string[] = [];
  const options: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const match = /^--(pin|wallet|trust|issuer-trust|format)(?:=(.*))?$/.exec(arg);
    if (!match) {
      if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
      positional.push(arg);
      continue;
    }
    const value = match[2] ?? rest[++i];
    if (value === undefined) throw new UsageError(`--${match[1]} needs a value`);
    options[match[1]] = value;
  }
  const wallet = options.wallet ?? DEFAULT_WALLET_FILE;
  if (command !== 'receive' && options['issuer-trust'] !== undefined)
    throw new UsageError('--issuer-trust is for receive only');
  if (command === 'list') {
    if (positional.length || options.pin !== undefined || options.trust !== undefined || options.format !== undefined)
      throw new UsageError('list takes only --wallet');
    return { command, wallet };
  }
  if (command === 'present') {
    if (options.pin !== undefined || options.format !== undefined)
      throw new UsageError('present takes no --pin and no --format');
    if (positional.length !== 1) throw new UsageError('present takes exactly one openid4vp:// request URI');
    return {
      command,
      requestUri: positional[0],
      wallet,
      ...(options.trust !== undefined ? { trust: options.trust } : {}),
    };
  }
  if (command === 'import-mdoc') {
    if (options.pin !== undefined || options.trust !== undefined || options.format !== undefined)
      throw new UsageError('import-mdoc takes only --wallet');
    if (positional.length !== 1) throw new UsageError('import-mdoc takes exactly one JSON file');
    return { command, mdocFile: positional[0], wallet };
  }
  if (options.trust !== undefined) throw new UsageError('receive takes no --trust');
  if (options.format !== undefined && options.format !== 'mso_mdoc')
    throw new UsageError('--format takes mso_mdoc (an SD-JWT VC is the default)');
  if (positional.length !== 1) throw new UsageError('receive takes exactly one offer URI');
  return {
    command,
    offerUri: positional[0],
    pin: options.pin,
    wallet,
    ...(options['issuer-trust'] !== undefined ? { issuerTrust: options['issuer-trust'] } : {}),
    ...(options.format ? { format: 'mso_mdoc' as const } : {}),
  };
}

/** One credential as a person reads it (an mdoc's elements under their namespaces); long values (images) are shortened. */
export function describe(credential: StoredCredential): string {
  const mdoc = credential.format === 'mso_mdoc';
  const expires = mdoc ? credential.validUntil : expiryOf(credential.credential);
  const lines = [
    mdoc ? `${credential.doctype} (mdoc)` : credential.vct,
    `  id:       ${credential.id}`,
    `  issuer:   ${credential.issuer}`,
    `  received: ${credential.receivedAt}`,
    ...(expires ? [`  expires:  ${expires}`] : []),
    '  claims:',
    ...(mdoc
      ? Object.entries(credential.claims).flatMap(([namespace, elements]) => [
          `    ${namespace}:`,
          ...Object.entries(elements).map(([name, value]) => `      ${name}: ${shorten(value)}`),
        ])
      : Object.entries(credential.claims).map(([name, value]) => `    ${name}: ${shorten(value)}`)),
  ];
  return lines.join('\n');
}

function expiryOf(credential: string): string | undefined {
  try {
    const { exp } = decodeJwt(credential.split('~')[0]);
    return exp === undefined ? undefined : new Date(exp * 1000).toISOString();
  } catch {
    return undefined;
  }
}

function shorten(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : value instanceof Uint8Array
        ? `<${value.length} bytes>`
        : String(JSON.stringify(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The CA certificates of a PEM file named by `option`; a missing or unreadable file is the holder's error. */
async function readTrustFile(option: string, file: string): Promise<Uint8Array[]> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    throw new WalletError(
      `${option} ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
  try {
    return readPemCertificates(pem, `${option} ${file}`);
  } catch (err) {
    throw new WalletError((err as Error).message);
  }
}

export async function run(argv: string[], out: (line: string) => void = console.log): Promise<void> {
  const cmd = parseArgs(argv);
  if (cmd.command === 'help') return out(USAGE);
  const wallet = await DevWallet.open(cmd.wallet);
  if (cmd.command === 'list') {
    const credentials = wallet.list();
    out(credentials.length ? credentials.map(describe).join('\n\n') : `no credentials in ${cmd.wallet}`);
    return;
  }
  if (cmd.command === 'present') {
    const trust = cmd.trust !== undefined ? await readTrustFile('--trust', cmd.trust) : undefined;
    const { status, body, redirectUri, verifier } = await wallet.present(cmd.requestUri!, { trust });
    if (status === 200) {
      out(`presented${verifier ? ` to ${verifier}` : ''}: the verifier accepted the presentation`);
      // OpenID4VP 1.0 §8.2: a wallet on the holder's device sends the browser on; the dev wallet says where
      if (redirectUri) out(`Open this address in the browser to finish: ${redirectUri}`);
      return;
    }
    const { error, error_description: description } = (typeof body === 'object' && body !== null ? body : {}) as {
      error?: unknown;
      error_description?: unknown;
    };
    throw new WalletError(
      typeof error === 'string'
        ? `the verifier refused the presentation: ${error}${typeof description === 'string' ? `: ${description}` : ''}`
        : `the verifier answered HTTP ${status}`,
      { status },
    );
  }
  if (cmd.command === 'import-mdoc') {
    let input: unknown;
    try {
      input = JSON.parse(await readFile(cmd.mdocFile!, 'utf8'));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new WalletError(
        `${cmd.mdocFile}: ${code === 'ENOENT' ? 'no such file' : err instanceof SyntaxError ? 'not JSON' : (err as Error).message}`,
      );
    }
    if (typeof input !== 'object' || input === null)
      throw new WalletError(`${cmd.mdocFile}: expected a JSON object with issuerSigned, doctype and deviceKey`);
    const imported = await wallet.importMdoc(input as Parameters<DevWallet['importMdoc']>[0]);
    out(`imported into ${cmd.wallet}:\n${describe(imported)}`);
    return;
  }
  const issuerTrust =
    cmd.issuerTrust !== undefined ? await readTrustFile('--issuer-trust', cmd.issuerTrust) : undefined;
  const received =
    cmd.format === 'mso_mdoc'
      ? await wallet.receiveMdoc(cmd.offerUri!, { pin: cmd.pin, ...(issuerTrust ? { issuerTrust } : {}) })
      : await wallet.receive(cmd.offerUri!, { pin: cmd.pin, ...(issuerTrust ? { issuerTrust } : {}) });
  out(`received into ${cmd.wallet}:\n${describe(received)}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  run(process.argv.slice(2)).catch((err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    const hint = err instanceof UsageError ? ' (run with help for usage)' : '';
    process.stderr.write(`error: ${message.split('\n')[0]}${hint}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  });
}
