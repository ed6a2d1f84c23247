import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../../src/wallet/cli.js';
import { DevWallet } from '../../../src/wallet/holder.js';
import { DEFAULT_WALLET_FILE, readWalletFile, writeWalletFile, type StoredCredential } from '../../../src/wallet/walletFile.js';

const credential: StoredCredential = {
  id: '5b0c7a1e-0000-4000-8000-000000000001',
  format: 'dc+sd-jwt',
  credential: 'eyJhbGciOiJFUzI1NiJ9.e30.sig~WyJzYWx0IiwiRmlyc3ROYW1lIiwiQWRhIl0~',
  issuer: 'https://vc.example.com/wallet',
  vct: 'https://vc.example.com/types/EmployeeBadge',
  receivedAt: '2026-01-01T00:00:00.000Z',
  holderKey: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' },
  claims: { FirstName: 'Ada' },
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wallet-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the wallet file', () => {
  it('is readable only by its owner, as it holds private keys', async () => {
    const file = join(dir, 'nested', 'wallet.json');
    await writeWalletFile(file, { version: 1, credentials: [credential] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'nested'))).mode & 0o777).toBe(0o700);
  });

  it('becomes 0600 again when rewritten over a wider file', async () => {
    const file = join(dir, 'wallet.json');
    await writeFile(file, JSON.stringify({ version: 1, credentials: [] }), { mode: 0o644 });
    await writeWalletFile(file, { version: 1, credentials: [credential] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('round-trips its credentials, holder keys included', async () => {
    const file = join(dir, 'wallet.json');
    await writeWalletFile(file, { version: 1, credentials: [credential] });
    expect(await readWalletFile(file)).toEqual({ version: 1, credentials: [credential] });
    const wallet = await DevWallet.open(file);
    expect(wallet.list()).toEqual([credential]);
    expect(JSON.parse(await readFile(file, 'utf8')).credentials[0].holderKey.d).toBe('d');
  });

  it('opens as an empty wallet when it does not exist yet', async () => {
    const wallet = await DevWallet.open(join(dir, 'missing.json'));
    expect(wallet.list()).toEqual([]);
  });

  it('refuses a file that is not a wallet', async () => {
    const file = join(dir, 'other.json');
    await writeFile(file, '{"hello":"world"}');
    await expect(DevWallet.open(file)).rejects.toThrow('is not a wallet file');
    await writeFile(file, 'not json');
    await expect(DevWallet.open(file)).rejects.toThrow('is not a wallet file');
  });

  it('hands out copies, so callers cannot change what is stored', async () => {
    const file = join(dir, 'wallet.json');
    await writeWalletFile(file, { version: 1, credentials: [credential] });
    const wallet = await DevWallet.open(file);
    wallet.list()[0].claims.FirstName = 'Eve';
    expect(wallet.list()[0].claims.FirstName).toBe('Ada');
  });
});

describe('the dev wallet command line', () => {
  it('reads receive with a PIN and a wallet file', () => {
    expect(parseArgs(['receive', 'openid-credential-offer://?x', '--pin', '1234', '--wallet=w.json'])).toEqual({
      command: 'receive',
      offerUri: 'openid-credential-offer://?x',
      pin: '1234',
      wallet: 'w.json',
    });
  });

  it('defaults the wallet file', () => {
    expect(parseArgs(['list'])).toEqual({ command: 'list', wallet: DEFAULT_WALLET_FILE });
  });

  it.each([
    [['frobnicate']],
    [['receive']],
    [['receive', 'a', 'b']],
    [['receive', 'a', '--pin']],
    [['list', '--pin', '1']],
    [['list', '--verbose']],
  ])('refuses %j', (argv) => {
    expect(() => parseArgs(argv)).toThrow();
  });
});
