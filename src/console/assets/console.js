// The Switchboard console's only script (served from /console/assets; the CSP allows no other).
// It makes server-rendered pages live: Server-Sent Events say which topic changed, and the page
// fetches its own live region again through the same authorised route. Every page works without it.
// Nothing here builds HTML from data: fragments come already escaped from the server, and text from
// a response is set with textContent.

const main = document.getElementById('main');
const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
const topics = (main?.dataset.live ?? '').split(' ').filter(Boolean);
const REFRESH_MS = 30_000;

/** The tab title leads with the pending count: `(3) Approvals · Switchboard`. */
function showPending(n) {
  if (!main) return;
  document.title = `${n > 0 ? `(${n}) ` : ''}${main.dataset.title} · Switchboard`;
  const badge = document.getElementById('pending-count');
  if (badge) {
    badge.textContent = String(n);
    badge.hidden = n === 0;
  }
}

function fragmentUrl() {
  const url = new URL(location.href);
  url.searchParams.delete('done');
  url.searchParams.set('fragment', '1');
  return url.pathname + url.search;
}

/**
 * Keyed merge: children that stay keep their DOM (and what is typed into them), new ones arrive in
 * order, gone ones leave. A card just decided (`done`) stays until its own timer removes it.
 */
function merge(current, fresh) {
  const keep = new Map([...current.children].map((el) => [el.dataset.key, el]));
  const wanted = new Set([...fresh.children].map((el) => el.dataset.key));
  for (const [key, el] of keep) if (!wanted.has(key) && !el.classList.contains('done')) el.remove();
  let here = current.firstElementChild;
  const stale = (el) => el?.classList.contains('done') && !wanted.has(el.dataset.key);
  for (const el of [...fresh.children]) {
    while (stale(here)) here = here.nextElementSibling;
    const node = keep.get(el.dataset.key) ?? document.importNode(el, true);
    if (node === here) here = here.nextElementSibling;
    else current.insertBefore(node, here);
  }
}

let refreshing = false;
let again = false;
async function refresh() {
  if (refreshing) {
    again = true;
    return;
  }
  refreshing = true;
  try {
    const res = await fetch(fragmentUrl(), { headers: { 'x-requested-with': 'console' } });
    if (res.status === 401) return signedOut();
    if (!res.ok) return;
    const count = res.headers.get('x-pending-count');
    if (count !== null) showPending(Number(count));
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    const fresh = doc.getElementById('live');
    const current = document.getElementById('live');
    if (!fresh || !current) return;
    const parts = fresh.querySelectorAll('[data-merge], [data-block]');
    if (parts.length === 0) {
      current.replaceWith(document.importNode(fresh, true));
    } else {
      for (const part of parts) {
        const target = document.getElementById(part.id);
        if (!target) continue;
        if (part.hasAttribute('data-merge')) merge(target, part);
        else target.replaceWith(document.importNode(part, true));
      }
    }
    tick();
  } finally {
    refreshing = false;
    if (again) {
      again = false;
      void refresh();
    }
  }
}

async function refreshCount() {
  const res = await fetch('/console/approvals/count', { headers: { 'x-requested-with': 'console' } });
  if (res.ok) showPending((await res.json()).pending);
}

function signedOut() {
  if (document.querySelector('.banner')) return;
  const p = document.createElement('p');
  p.className = 'banner';
  p.setAttribute('role', 'alert');
  p.textContent = 'Your session ended. Reload the page to sign in again.';
  document.body.prepend(p);
}

/** Live: each event names a topic; a burst of events becomes one fetch. */
if (main) {
  let timer;
  const soon = (fn) => {
    clearTimeout(timer);
    timer = setTimeout(fn, 150);
  };
  const source = new EventSource('/console/live');
  for (const topic of ['approvals', 'tasks', 'deliveries']) {
    source.addEventListener(topic, () => {
      if (topics.includes(topic)) soon(refresh);
      else if (topic === 'approvals') soon(refreshCount);
    });
  }
  // The stream opens after the page was rendered: whatever happened in between is fetched once.
  let opened = false;
  source.addEventListener('hello', () => {
    if (opened) soon(topics.length > 0 ? refresh : refreshCount);
    else if (topics.length > 0) void refresh();
    opened = true;
  });
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) signedOut();
  });
  if (topics.length > 0) setInterval(refresh, REFRESH_MS);
  else setInterval(refreshCount, REFRESH_MS);
}

/** Countdowns on approval cards; an expired card can no longer be decided. */
function tick() {
  const now = Date.now();
  for (const card of document.querySelectorAll('[data-expires]')) {
    const left = Date.parse(card.dataset.expires) - now;
    const label = card.querySelector('[data-countdown]');
    if (left <= 0) {
      card.classList.add('expired');
      if (label) label.textContent = 'expired';
      for (const b of card.querySelectorAll('button')) b.disabled = true;
      continue;
    }
    const s = Math.floor(left / 1000);
    const text =
      s < 60
        ? `${s}s`
        : s < 3600
          ? `${Math.floor(s / 60)}m ${s % 60}s`
          : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
    if (label) label.textContent = `${text} left`;
  }
}
tick();
setInterval(tick, 1000);

/** Forms that ask first (cancel a task, open a raw payload). */
document.addEventListener('submit', (ev) => {
  const form = ev.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !confirm(form.dataset.confirm))
    ev.preventDefault();
});

/** Approve / reject without leaving the page; the card answers in place. */
document.addEventListener('submit', async (ev) => {
  const form = ev.target;
  if (!(form instanceof HTMLFormElement) || !form.classList.contains('decide') || ev.defaultPrevented) return;
  ev.preventDefault();
  const body = new URLSearchParams(new FormData(form));
  const button = ev.submitter;
  if (button?.name) body.set(button.name, button.value);
  const card = form.closest('.card');
  const error = form.querySelector('.error');
  for (const b of form.querySelectorAll('button')) b.disabled = true;
  try {
    const res = await fetch(form.action, {
      method: 'POST',
      body,
      headers: { 'x-requested-with': 'console', 'x-csrf-token': csrf, accept: 'application/json' },
    });
    const answer = await res.json().catch(() => ({}));
    if (!res.ok) {
      if (error) {
        error.textContent = answer?.error?.message ?? `Failed (${res.status}).`;
        error.hidden = false;
      }
      for (const b of form.querySelectorAll('button')) b.disabled = false;
      return;
    }
    if (card) {
      card.classList.add('done');
      const note = document.createElement('p');
      note.setAttribute('role', 'status');
      note.className = 'flash ok';
      note.textContent = answer.status === 'approved' ? 'Approved.' : 'Rejected.';
      form.replaceWith(note);
      setTimeout(() => {
        card.remove();
        void refresh();
      }, 1200);
    }
  } catch {
    if (error) {
      error.textContent = 'The gateway did not answer; nothing was decided. Try again.';
      error.hidden = false;
    }
    for (const b of form.querySelectorAll('button')) b.disabled = false;
  }
});
