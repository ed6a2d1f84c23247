import { describe, it, expect } from 'vitest';
import { checkPkce, type PkceMethod } from '../../../src/rules/pkce.js';
import { expectProtocolError } from './helpers.js';

// RFC 7636 Appendix B
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const S256_OF_VERIFIER = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const both: readonly PkceMethod[] = ['S256', 'plain'];
const required = { required: true, methods: both };
const optional = { required: false, methods: both };

describe('spec: Authentication 5 / Errors (Version 2) code_challenge "PKCE required and challenge not provided"', () => {
  it('returns undefined when neither parameter is present and PKCE is optional (D5)', () => {
    expect(checkPkce({}, optional)).toBeUndefined();
    expect(checkPkce({ code_challenge: '', code_challenge_method: '' }, optional)).toBeUndefined();
  });

  it('refuses a missing code_challenge when the client requires PKCE (spec: Errors, code_challenge -> invalid_request)', () => {
    expectProtocolError(
      () => checkPkce({}, required),
      'invalid_request',
      'code_challenge is required: the client is configured for PKCE',
    );
    expectProtocolError(
      () => checkPkce({ code_challenge_method: 'S256' }, required),
      'invalid_request',
      'code_challenge is required',
    );
  });

  it('refuses code_challenge_method without code_challenge (RFC 7636 4.3)', () => {
    expectProtocolError(
      () => checkPkce({ code_challenge_method: 'S256' }, optional),
      'invalid_request',
      'code_challenge is required',
    );
  });

  it('refuses code_challenge without code_challenge_method (spec: Authentication 5, both are required)', () => {
    expectProtocolError(
      () => checkPkce({ code_challenge: S256_OF_VERIFIER }, optional),
      'invalid_request',
      'code_challenge_method is required',
    );
  });
});

describe('spec: Errors (Version 2) code_challenge_method "method not supported" (D5: pkceMethods narrows)', () => {
  it('refuses an unknown method, naming code_challenge_method and listing supported ones (spec: Errors)', () => {
    expectProtocolError(
      () => checkPkce({ code_challenge: S256_OF_VERIFIER, code_challenge_method: 'S512' }, required),
      'invalid_request',
      'code_challenge_method "S512" is not supported',
      'S256, plain',
    );
  });

  it('refuses plain when the client narrowed methods to S256 (D5)', () => {
    expectProtocolError(
      () =>
        checkPkce({ code_challenge: VERIFIER, code_challenge_method: 'plain' }, { required: true, methods: ['S256'] }),
      'invalid_request',
      'code_challenge_method "plain" is not supported',
      'supported: S256',
    );
  });

  it('is case-sensitive: s256 is not S256 (RFC 7636 4.3)', () => {
    expectProtocolError(
      () => checkPkce({ code_challenge: S256_OF_VERIFIER, code_challenge_method: 's256' }, required),
      'invalid_request',
      'code_challenge_method',
    );
  });

  it('refuses a non-string method (spec: Errors)', () => {
    expectProtocolError(
      () => checkPkce({ code_challenge: S256_OF_VERIFIER, code_challenge_method: ['S256'] }, required),
      'invalid_request',
      'code_challenge_method is not supported',
    );
  });
});

describe('RFC 7636 4.1/4.2: challenge format', () => {
  it('returns an S256 challenge as is (D5)', () => {
    expect(checkPkce({ code_challenge: S256_OF_VERIFIER, code_challenge_method: 'S256' }, required)).toEqual({
      code_challenge: S256_OF_VERIFIER,
      code_challenge_method: 'S256',
    });
  });

  it.each([
    ['too short', S256_OF_VERIFIER.slice(0, 42)],
    ['too long', `${S256_OF_VERIFIER}A`],
    ['padded', `${S256_OF_VERIFIER.slice(0, 42)}=`],
    ['standard base64 characters', `${S256_OF_VERIFIER.slice(0, 42)}+`],
  ])('refuses an S256 challenge that is %s (RFC 7636 4.2)', (_, c) => {
    expectProtocolError(
      () => checkPkce({ code_challenge: c, code_challenge_method: 'S256' }, required),
      'invalid_request',
      'code_challenge must be 43 base64url characters',
    );
  });

  it.each([
    ['42 characters', 'a'.repeat(42)],
    ['129 characters', 'a'.repeat(129)],
    ['a character outside [A-Za-z0-9-._~]', `${'a'.repeat(42)}+`],
    ['a space', `${'a'.repeat(42)} `],
  ])('refuses a plain challenge of %s (RFC 7636 4.1)', (_, c) => {
    expectProtocolError(
      () => checkPkce({ code_challenge: c, code_challenge_method: 'plain' }, required),
      'invalid_request',
      'code_challenge must be 43-128 characters',
    );
  });

  it('refuses a non-string challenge (RFC 7636 4.2)', () => {
    expectProtocolError(
      () => checkPkce({ code_challenge: 42, code_challenge_method: 'S256' }, required),
      'invalid_request',
      'code_challenge must be a string',
    );
  });
});

describe('D5: plain is translated to S256 at the edge', () => {
  it('returns base64url(SHA-256(challenge)) with method S256 for plain (D5; RFC 7636 Appendix B)', () => {
    expect(checkPkce({ code_challenge: VERIFIER, code_challenge_method: 'plain' }, required)).toEqual({
      code_challenge: S256_OF_VERIFIER,
      code_challenge_method: 'S256',
    });
  });

  it('accepts plain challenges at both length bounds with all unreserved characters (RFC 7636 4.1)', () => {
    const min = `AZaz09-._~${'x'.repeat(33)}`;
    expect(checkPkce({ code_challenge: min, code_challenge_method: 'plain' }, optional)?.code_challenge).toMatch(
      /^[A-Za-z0-9_-]{43}$/,
    );
    expect(
      checkPkce({ code_challenge: 'y'.repeat(128), code_challenge_method: 'plain' }, optional)?.code_challenge_method,
    ).toBe('S256');
  });
});
