/* The prompt page's script (views/prompt.ts), inlined under the page's CSP nonce. Static: its inputs are
   the data-* attributes of #prompt, and it writes text only with textContent. */
(function () {
  'use strict';
  var root = document.getElementById('prompt');
  if (!root || typeof window.fetch !== 'function') return;

  var statusText = document.getElementById('status-text');
  var errorBox = document.getElementById('error');
  var countdown = document.getElementById('countdown');
  var announce = document.getElementById('expiry-announce');
  var walletLink = document.getElementById('wallet-link');
  var walletHint = document.getElementById('wallet-hint');
  var fresh = document.getElementById('fresh');
  var freshText = document.getElementById('fresh-text');
  var giveUp = document.getElementById('give-up');

  // every text in the page's language, made by the server (views/prompt.ts scriptTexts)
  var text = {};
  try { text = JSON.parse(root.getAttribute('data-text') || '{}') || {}; } catch (e) { text = {}; }
  function say(key) { return typeof text[key] === 'string' ? text[key] : ''; }
  var waitingText = say('waiting');
  // an External Client flow: the app continues by itself, this page never goes back to it
  var handover = root.getAttribute('data-handover') === 'true';
  var expiresIn = Number(root.getAttribute('data-expires-in'));
  // Deadline from the server-computed remaining time, so a wrong device clock does not matter.
  var deadline = Date.now() + (isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 0);

  var MIN_DELAY = 1000;
  var MAX_DELAY = 5000;
  var delay = MIN_DELAY;
  var failures = 0;
  var finished = false;
  var expired = false;
  var warned = false;
  var inFlight = null;
  var pollTimer = 0;
  var tickTimer = 0;

  function resolve(u) {
    try { return u ? new URL(u, location.href) : null; } catch (e) { return null; }
  }
  var statusUrl = resolve(root.getAttribute('data-status-url'));
  var canPoll = !!statusUrl && statusUrl.origin === location.origin;

  // where to go once the step is over: the provider's resume URL when the status names one (same origin
  // only), else the continue step, which finishes the authorisation itself
  var next = null;
  function go() {
    var u = next || resolve(root.getAttribute('data-continue-url'));
    if (u && (u.protocol === 'https:' || u.protocol === 'http:')) location.assign(u.href);
  }

  function setState(state, text) {
    root.setAttribute('data-state', state);
    if (statusText.textContent !== text) statusText.textContent = text;
  }

  // the wallet went silent or could not take the request: its QR code and link are spent; a fresh request
  // (the form) replaces them, and after a refusal the holder may also give up
  function stuck(kind, text) {
    root.classList.toggle('is-stuck', !!kind);
    if (!fresh) return;
    fresh.hidden = !kind;
    if (freshText && freshText.textContent !== (text || '')) freshText.textContent = text || '';
    if (giveUp) giveUp.hidden = kind !== 'refused';
  }

  function finish() {
    finished = true;
    clearTimeout(pollTimer);
    clearTimeout(tickTimer);
    root.classList.add('is-final');
    if (walletLink) {
      walletLink.setAttribute('aria-disabled', 'true');
      walletLink.setAttribute('tabindex', '-1');
    }
    if (walletHint) walletHint.hidden = true;
  }

  function reveal() {
    var progress = document.getElementById('progress');
    if (progress && progress.scrollIntoView) progress.scrollIntoView({ block: 'nearest' });
  }

  // One message for how the step ended: its title, and the server's reason when it gives one (an expiry
  // has none: the title says it). The next step is the status line's, never the message's.
  function showError(kind, message) {
    var h = document.createElement('p');
    h.className = 'alert-title';
    h.textContent = kind === 'expired' ? say('expiredTitle') : say('failedTitle');
    errorBox.textContent = '';
    errorBox.appendChild(h);
    var text = typeof message === 'string' && message.trim() ? message.trim().slice(0, 500) : kind === 'expired' ? '' : say('failedText');
    if (!text) return;
    var p = document.createElement('p');
    p.textContent = text;
    errorBox.appendChild(p);
  }

  function handle(s) {
    if (finished || !s || typeof s.status !== 'string') return;
    if (s.status !== 'stalled' && s.status !== 'refused') stuck(null);
    switch (s.status) {
      case 'pending':
        setState('pending', waitingText);
        break;
      case 'moved':
        // D12: the journey was continued in another browser, which goes back to the app
        finish();
        setState('done', say('moved'));
        reveal();
        break;
      case 'scanned':
        setState('scanned', say('connected'));
        if (walletHint) walletHint.hidden = true;
        break;
      case 'stalled':
        setState('stalled', say('connected'));
        if (walletHint) walletHint.hidden = true;
        stuck('stalled', say('stalled'));
        break;
      case 'refused':
        setState('refused', typeof s.message === 'string' && s.message.trim() ? s.message.trim().slice(0, 500) : say('failedText'));
        if (walletHint) walletHint.hidden = true;
        stuck('refused', say('refused'));
        break;
      case 'returning':
        // same-device: the wallet sends its browser back to finish (OpenID4VP 1.0 section 8.2)
        setState('scanned', say('returning'));
        if (walletHint) walletHint.hidden = true;
        break;
      case 'pin_retry':
        // the server words the attempts left in the page's language (plural rules are the catalogue's)
        setState('pin_retry', typeof s.message === 'string' && s.message.trim() ? s.message.trim().slice(0, 500) : say('pinRetry'));
        break;
      case 'done':
        var resumeAt = resolve(s.next);
        if (resumeAt && resumeAt.origin === location.origin) next = resumeAt;
        finish();
        if (handover) {
          setState('done', say('doneHandover'));
          reveal();
          break;
        }
        setState('done', say('doneReturning'));
        reveal();
        setTimeout(go, 600);
        break;
      case 'failed':
      case 'expired':
        finish();
        showError(s.status, s.message);
        reveal();
        if (handover) {
          setState(s.status, say('toldClose'));
          break;
        }
        setState(s.status, say('backTo'));
        setTimeout(go, 3000);
        break;
    }
  }

  function fetchStatus() {
    if (inFlight) return inFlight;
    var ctrl = typeof AbortController === 'function' ? new AbortController() : null;
    var timeout = ctrl ? setTimeout(function () { ctrl.abort(); }, 10000) : 0;
    inFlight = fetch(statusUrl.href, {
      method: 'GET',
      credentials: 'same-origin',
      cache: 'no-store',
      headers: { Accept: 'application/json' },
      signal: ctrl ? ctrl.signal : undefined
    }).then(function (res) {
      return res.json().catch(function () { return null; });
    }).then(function (body) {
      if (!body || typeof body.status !== 'string') throw new Error('unexpected status response');
      failures = 0;
      handle(body);
      return true;
    }).catch(function () {
      failures += 1;
      if (failures >= 2 && !finished) statusText.textContent = say('connectionProblem');
      return false;
    }).then(function (ok) {
      clearTimeout(timeout);
      inFlight = null;
      return ok;
    });
    return inFlight;
  }

  function poll() {
    pollTimer = 0;
    if (finished || expired) return;
    fetchStatus().then(function (ok) {
      if (finished || expired) return;
      delay = ok ? MIN_DELAY : Math.min(delay * 2, MAX_DELAY);
      clearTimeout(pollTimer);
      pollTimer = setTimeout(poll, delay);
    });
  }

  function onExpired() {
    if (expired || finished) return;
    expired = true;
    clearTimeout(pollTimer);
    var last = function () {
      if (finished) return;
      if (!canPoll) { handle({ status: 'expired' }); return; }
      // The countdown reached zero: ask the server once more, then give up locally.
      fetchStatus().then(function () { handle({ status: 'expired' }); });
    };
    if (inFlight) inFlight.then(last); else last();
  }

  function format(ms) {
    var total = Math.max(0, Math.ceil(ms / 1000));
    var h = Math.floor(total / 3600);
    var m = Math.floor((total % 3600) / 60);
    var s = total % 60;
    var ss = (s < 10 ? '0' : '') + s;
    return h > 0 ? h + ':' + (m < 10 ? '0' : '') + m + ':' + ss : m + ':' + ss;
  }

  function tick() {
    clearTimeout(tickTimer);
    if (finished || expired) return;
    var left = deadline - Date.now();
    if (left <= 0) {
      if (countdown) countdown.textContent = '0:00';
      onExpired();
      return;
    }
    if (countdown) countdown.textContent = format(left);
    if (left <= 60000) {
      root.classList.add('is-expiring');
      if (!warned && announce) {
        warned = true;
        announce.textContent = say('lastMinute');
      }
    }
    tickTimer = setTimeout(tick, (left % 1000) || 1000);
  }

  // "copy link": for a wallet on a desktop or the dev wallet; shown only where the clipboard can be written
  var copyButton = document.getElementById('copy-link');
  var copyStatus = document.getElementById('copy-status');
  if (copyButton && navigator.clipboard && typeof navigator.clipboard.writeText === 'function' && window.isSecureContext) {
    copyButton.hidden = false;
    copyButton.addEventListener('click', function () {
      var link = copyButton.getAttribute('data-link') || '';
      navigator.clipboard.writeText(link).then(function () {
        if (copyStatus) copyStatus.textContent = say('copied');
      }, function () {
        if (copyStatus) copyStatus.textContent = say('copyFailed') + ' ' + link;
      });
    });
  }

  if (walletLink && walletHint) {
    walletLink.addEventListener('click', function () {
      if (finished) return;
      setTimeout(function () {
        if (!finished && document.visibilityState === 'visible' && root.getAttribute('data-state') === 'pending') {
          walletHint.hidden = false;
        }
      }, 2500);
    });
  }

  document.addEventListener('visibilitychange', function () {
    if (document.visibilityState !== 'visible' || finished || expired) return;
    tick();
    if (canPoll && !inFlight) { clearTimeout(pollTimer); poll(); }
  });

  // Coming back with the Back button after the redirect: never resume a finished page from the cache.
  window.addEventListener('pageshow', function (e) {
    if (e.persisted) location.reload();
  });

  if (canPoll) poll();
  tick();
})();
