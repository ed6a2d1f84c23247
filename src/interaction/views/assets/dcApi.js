/* The prompt's Digital Credentials API action (views/dcApiParts.ts; OpenID4VP 1.0 Appendix A and ISO/IEC
   18013-7 Annex C), inlined after prompt.js. Where the browser allows one of the offered protocols (Safari:
   org-iso-mdoc only), it fetches the requests ahead of the
   click (navigator.credentials.get needs the click's activation), asks on the click, and posts the
   credential to the prompt; prompt.js's polling then goes on as for every wallet. A decline keeps the
   link and the QR code. Elsewhere it does nothing, and the page stays as it is. */
(function () {
  'use strict';
  var box = document.getElementById('dc-api');
  var DC = window.DigitalCredential;
  if (!box || typeof window.fetch !== 'function' || !DC || typeof DC.userAgentAllowsProtocol !== 'function') return;
  if (!navigator.credentials || typeof navigator.credentials.get !== 'function') return;
  var root = document.getElementById('prompt');
  var button = document.getElementById('dc-api-button');
  var line = document.getElementById('dc-api-status');
  var url = null;
  try {
    url = new URL(box.getAttribute('data-url') || '', location.href);
  } catch (e) {
    url = null;
  }
  if (!url || url.origin !== location.origin || !button || !line) return;

  var text = {};
  try {
    text = JSON.parse(box.getAttribute('data-text') || '{}') || {};
  } catch (e) {
    text = {};
  }
  function say(key) {
    return typeof text[key] === 'string' ? text[key] : '';
  }

  function allowed(request) {
    try {
      return !!request && typeof request.protocol === 'string' && DC.userAgentAllowsProtocol(request.protocol) === true;
    } catch (e) {
      return false;
    }
  }

  var requests = null;
  var busy = false;

  fetch(url.href, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } })
    .then(function (res) {
      return res.ok ? res.json() : null;
    })
    .then(function (body) {
      var offered = body && Array.isArray(body.requests) ? body.requests.filter(allowed) : [];
      if (!offered.length) return;
      requests = offered;
      box.hidden = false;
      // the main action is this one now; the link stays for wallets the browser does not reach
      var link = document.getElementById('wallet-link');
      if (link) {
        link.classList.remove('button--primary');
        link.classList.add('button--secondary');
      }
    })
    .catch(function () {
      /* the page stays as it is */
    });

  function post(credential) {
    line.textContent = say('checking');
    return fetch(url.href, {
      method: 'POST',
      credentials: 'same-origin',
      cache: 'no-store',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ protocol: credential.protocol, data: credential.data }),
    });
  }

  // verified: the provider's resume URL (same origin only), where the prompt's polling would go too
  function resume(body) {
    var next;
    try {
      next = body && typeof body.next === 'string' ? new URL(body.next, location.href) : null;
    } catch (e) {
      next = null;
    }
    if (next && next.origin === location.origin) location.assign(next.href);
  }

  button.addEventListener('click', function () {
    if (busy || !requests || (root && root.classList.contains('is-final'))) return;
    busy = true;
    button.disabled = true;
    line.textContent = '';
    var asked = navigator.credentials.get({ digital: { requests: requests } });
    asked
      .then(function (credential) {
        if (!credential || typeof credential.protocol !== 'string') throw new Error('no credential');
        // sent: verified, the browser resumes where the answer says; otherwise the prompt's polling tells
        // how the check ended (failed or expired)
        return post(credential).then(
          function (res) {
            return res.json().then(resume, function () {});
          },
          function () {
            line.textContent = '';
          }
        );
      })
      .then(null, function (err) {
        busy = false;
        button.disabled = false;
        var declined = err && (err.name === 'NotAllowedError' || err.name === 'AbortError');
        line.textContent = declined ? say('declined') : say('unavailable');
      });
  });
})();
