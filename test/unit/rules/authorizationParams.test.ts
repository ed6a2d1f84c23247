import { describe, it, expect } from 'vitest';
import {
  checkNonce,
  checkRedirectUri,
  checkResponseMode,
  checkResponseType,
  checkState,
} from '../../../src/rules/authorizationParams.js';
import { singleValued } from '../../../src/http/form.js';
import { expectProtocolError } from './helpers.js';

describe('spec: Errors, ResponseType "Not provided" -> invalid_request, "Not code" -> unsupported_response_type', () => {
  it('accepts code (spec: Endpoints, response_type)', () => {
    expect(() => checkResponseType('code')).not.toThrow();
  });

  it.each([undefined, ''])(
    'refuses a missing response_type %j with invalid_request (spec: Errors, ResponseType not provided)',
    (v) => {
      expectProtocolError(() => checkResponseType(v), 'invalid_request', 'response_type is required');
    },
  );

  it.each(['token', 'id_token', 'code id_token', 'CODE', ['code']])(
    'refuses response_type %j with unsupported_response_type (spec: Errors, ResponseType not code)',
    (v) => {
      expectProtocolError(() => checkResponseType(v), 'unsupported_response_type', 'response_type must be code');
    },
  );
});

describe('spec: Errors, ResponseMode "Not query" -> invalid_request', () => {
  it('accepts an absent response_mode or query (spec: PAR, "If provided, must be query")', () => {
    expect(() => checkResponseMode(undefined)).not.toThrow();
    expect(() => checkResponseMode('query')).not.toThrow();
  });

  it.each(['fragment', 'form_post', 'QUERY', null])('refuses response_mode %j (spec: Errors, ResponseMode)', (v) => {
    expectProtocolError(() => checkResponseMode(v), 'invalid_request', 'response_mode must be query');
  });
});

describe('spec: Authentication 3, redirect_uri must exactly match (Errors: RedirectUri -> invalid_request)', () => {
  const registered = ['https://hr.example.com/callback', 'https://hr.example.com/cb?x=1'];

  it('returns an exactly matching redirect_uri (spec: Authentication 3)', () => {
    expect(checkRedirectUri('https://hr.example.com/cb?x=1', registered)).toBe('https://hr.example.com/cb?x=1');
  });

  it.each([undefined, ''])('refuses a missing redirect_uri %j (spec: Endpoints, redirect_uri required)', (v) => {
    expectProtocolError(() => checkRedirectUri(v, registered), 'invalid_request', 'redirect_uri is required');
  });

  it.each([
    'https://hr.example.com/callback/',
    'https://HR.example.com/callback',
    'https://hr.example.com:443/callback',
    'https://hr.example.com/callback?x=1',
    'https://hr.example.com/callback#f',
    'http://hr.example.com/callback',
    'https://evil.example/callback',
  ])('refuses %s, which is not an exact string match (spec: Authentication 3)', (v) => {
    expectProtocolError(
      () => checkRedirectUri(v, registered),
      'invalid_request',
      'redirect_uri is not registered for this client',
    );
  });

  it('refuses a non-string redirect_uri (spec: Errors, RedirectUri)', () => {
    expectProtocolError(
      () => checkRedirectUri(['https://hr.example.com/callback'], registered),
      'invalid_request',
      'redirect_uri',
    );
  });
});

describe('spec: Endpoints, nonce (required for non-PAR authorise)', () => {
  it('returns the nonce, or undefined when absent and not required', () => {
    expect(checkNonce('n-0S6_WzA2Mj', true, 512)).toBe('n-0S6_WzA2Mj');
    expect(checkNonce(undefined, false, 512)).toBeUndefined();
  });

  it('refuses a missing nonce when required (spec: Endpoints, non-PAR authorise "nonce Required")', () => {
    expectProtocolError(() => checkNonce(undefined, true, 512), 'invalid_request', 'nonce is required');
    expectProtocolError(() => checkNonce('', true, 512), 'invalid_request', 'nonce is required');
  });

  it('refuses a non-string nonce (spec: Endpoints, nonce string)', () => {
    expectProtocolError(() => checkNonce(123, false, 512), 'invalid_request', 'nonce must be a string');
  });

  it('refuses a nonce over 512 characters and accepts exactly 512 (Limits)', () => {
    expect(checkNonce('n'.repeat(512), true, 512)).toHaveLength(512);
    expectProtocolError(
      () => checkNonce('n'.repeat(513), true, 512),
      'invalid_request',
      'nonce must be at most 512 characters',
    );
  });
});

describe('Limits: state is kept and sent back, so its length is bounded', () => {
  it('accepts a state up to the limit, and none', () => {
    expect(() => checkState('s'.repeat(512), 512)).not.toThrow();
    expect(() => checkState(undefined, 512)).not.toThrow();
  });
  it('refuses a longer state with invalid_request naming it', () => {
    expectProtocolError(
      () => checkState('s'.repeat(513), 512),
      'invalid_request',
      'state must be at most 512 characters',
    );
  });
});

describe('RFC 6749 3.1: parameters must not be repeated; empty values are omitted', () => {
  it('returns a record of single-valued parameters', () => {
    expect(singleValued(new URLSearchParams('client_id=a&scope=openid+X&state=s'))).toEqual({
      client_id: 'a',
      scope: 'openid X',
      state: 's',
    });
  });

  it('refuses a repeated parameter, naming it (RFC 6749 3.1)', () => {
    expectProtocolError(
      () => singleValued(new URLSearchParams('scope=a&client_id=x&scope=b')),
      'invalid_request',
      'parameter "scope" must not be repeated',
    );
  });

  it('refuses a parameter repeated with the same value (RFC 6749 3.1)', () => {
    expectProtocolError(
      () =>
        singleValued([
          ['state', 's'],
          ['state', 's'],
        ]),
      'invalid_request',
      'parameter "state"',
    );
  });

  it('omits empty values, so an empty duplicate is not a repetition (RFC 6749 3.1)', () => {
    expect(singleValued(new URLSearchParams('nonce=&state=s&nonce=n&code_challenge='))).toEqual({
      state: 's',
      nonce: 'n',
    });
  });

  it('keeps a __proto__ parameter as an own property without touching the prototype', () => {
    const r = singleValued([
      ['__proto__', 'x'],
      ['a', 'b'],
    ]);
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(Object.hasOwn(r, '__proto__')).toBe(true);
    expect(r.a).toBe('b');
  });
});
