import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_ERROR_DESCRIPTION, safeErrorDescription } from '../../../src/http/errorDescription.js';

/** RFC 6749 §4.1.2.1: error_description = 1*( %x20-21 / %x23-5B / %x5D-7E ) */
const RFC_6749 = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;

describe('safeErrorDescription (issue 31 §5): what leaves the service as error_description', () => {
  it('keeps a plain description as it is', () => {
    const text = "vp_token.pid: the credential's issuer (iss) is not trusted";
    expect(safeErrorDescription(text)).toBe(text);
  });

  it('writes quotes and backslashes in the allowed set', () => {
    expect(safeErrorDescription('the credential typ "x" is not dc+sd-jwt \\ ok')).toBe(
      "the credential typ 'x' is not dc+sd-jwt / ok",
    );
  });

  it('writes our own section signs and typographic characters out', () => {
    expect(safeErrorDescription('(ISO/IEC 18013-5 §9.3.1) – the holder’s “wallet”…')).toBe(
      "(ISO/IEC 18013-5 section 9.3.1) - the holder's 'wallet'...",
    );
  });

  it('turns CR, LF and tabs into one space, so a description cannot start a new header or log line', () => {
    expect(safeErrorDescription('first\r\nInjected: yes\tend')).toBe('first Injected: yes end');
  });

  it('replaces controls, bidi overrides and other scripts by ?', () => {
    expect(safeErrorDescription('a\u202Eb\u0000c\u200Fd\u00e9\u{1F600}e')).toBe('a?b?c?d??e');
  });

  it('bounds the length, a cut description ending in ...', () => {
    const long = safeErrorDescription(`issuer ${'A'.repeat(200_000)}`);
    expect(long.length).toBe(MAX_ERROR_DESCRIPTION);
    expect(long.endsWith('...')).toBe(true);
    expect(safeErrorDescription('x'.repeat(MAX_ERROR_DESCRIPTION))).toBe('x'.repeat(MAX_ERROR_DESCRIPTION));
    expect(safeErrorDescription(`${'x'.repeat(MAX_ERROR_DESCRIPTION)}   `)).toBe('x'.repeat(MAX_ERROR_DESCRIPTION));
  });

  it('is never empty', () => {
    for (const text of ['', '   ', '\r\n']) expect(safeErrorDescription(text)).toMatch(RFC_6749);
  });

  it('gives only RFC 6749 characters, at most 300, for any input (random bytes read as UTF-8 and as Latin-1)', () => {
    for (let i = 0; i < 500; i++) {
      const bytes = randomBytes(1 + (i % 700));
      for (const text of [
        bytes.toString('utf8'),
        bytes.toString('latin1'),
        String.fromCharCode(...new Uint16Array(Uint8Array.from(bytes).buffer, 0, Math.floor(bytes.length / 2))),
      ]) {
        const safe = safeErrorDescription(text);
        expect(safe).toMatch(RFC_6749);
        expect(safe.length).toBeLessThanOrEqual(MAX_ERROR_DESCRIPTION);
        expect(safeErrorDescription(safe)).toBe(safe); // applied twice, as two boundaries may: the same
      }
    }
  });
});
