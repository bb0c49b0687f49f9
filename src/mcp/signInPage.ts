import { plainHostname } from './clientRegistration.js';

/** What each scope lets an assistant read, in the words a member signing in would use. */
export const scopeDescriptions: Readonly<Record<string, string>> = {
  'clinics:read': 'clinics and warehouses',
  'catalog:read': 'catalog items and categories',
  'catalog.cost:read': 'catalog costs and order line costs',
  'inventory:read': 'stock boxes, balances and movements',
  'orders:read': 'orders',
  'fulfillment:read': 'deliveries and custody history',
  'analytics:read': 'reports and the management briefing',
};

const escapes: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => escapes[character] ?? character);
}

/**
 * The Content-Security-Policy of the sign-in page: nothing loaded but its inline style, never
 * framed, and its form may go to this origin and to the origin of the redirect URI the request
 * named (already checked against the client's registered ones). Chromium applies `form-action`
 * to the redirects that answer a form's POST, and the answer to this one is the redirect to the
 * client, on another origin (the MCP Inspector, mcp-remote or Claude, on their own ports or
 * sites): with `'self'` alone the browser refuses it and the member is left on the page. The
 * origin only: CSP ignores the path of a redirect's target. CSP sources have no IPv6 literal
 * (Chromium drops `http://[::1]:6274` as invalid), so for one the scheme stands in. A host that
 * could break out of the header is refused at registration (`plainHostname`); an older one that
 * does anyway adds nothing.
 */
export function signInPagePolicy(redirectUri: string): string {
  const url = URL.canParse(redirectUri) ? new URL(redirectUri) : undefined;
  const web = url !== undefined && (url.protocol === 'https:' || url.protocol === 'http:') && plainHostname.test(url.hostname);
  const target = !web ? '' : url.hostname.startsWith('[') ? ` ${url.protocol}` : ` ${url.origin}`;
  return `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'${target}`;
}

/** Longest client name the page shows (registration refuses longer ones; older rows may hold more). */
const shownNameLength = 100;

export type SignInPageInput = {
  /** The name the client registered with (its own claim) or, without one, its id. */
  readonly clientName: string;
  readonly clientId: string;
  /** Where the browser goes after the answer, with the authorization code or the refusal. */
  readonly redirectHost: string;
  readonly scopes: readonly string[];
  readonly action: string;
  readonly error?: string;
};

/**
 * The sign-in page of `/authorize`: names the client, its id and the host the code will be sent
 * to, the scopes it asks for, where a sign-in code comes from, and has one text field,
 * `signInCode`, with a button to allow and one to deny. It posts to the URL it was served at
 * (same query), loads nothing external, and says nothing about any member.
 */
export function renderSignInPage(input: SignInPageInput): string {
  const scopeItems = input.scopes
    .map((scope) => `<li><code>${escapeHtml(scope)}</code> — ${escapeHtml(scopeDescriptions[scope] ?? scope)}</li>`)
    .join('\n        ');
  const name = escapeHtml(input.clientName.length > shownNameLength ? `${input.clientName.slice(0, shownNameLength)}…` : input.clientName);
  const host = escapeHtml(input.redirectHost);
  const errorId = 'signInCode-error';
  const error = input.error === undefined ? '' : `<p class="error" id="${errorId}" role="alert">${escapeHtml(input.error)}</p>`;
  const described = input.error === undefined ? 'aria-describedby="signInCode-help"' : `aria-describedby="signInCode-help ${errorId}" aria-invalid="true"`;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Sign in — Dental Supply assistant access</title>
    <style>
      body { font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; color: #1d2733; }
      h1 { font-size: 1.4rem; }
      .error { color: #a4161a; background: #fde8e8; padding: .6rem .8rem; border-radius: .3rem; }
      .where { background: #f1f4f8; padding: .6rem .8rem; border-radius: .3rem; }
      input[type=text] { font: inherit; font-size: 1.2rem; letter-spacing: .1em; padding: .4rem; width: 100%; box-sizing: border-box; }
      button { font: inherit; margin: 1rem .6rem 0 0; padding: .5rem 1.2rem; }
      li { margin: .2rem 0; }
      small { color: #4a5563; }
    </style>
  </head>
  <body>
    <h1>Let <strong>${name}</strong> read your workspace?</h1>
    <p>An assistant app that calls itself <strong>${name}</strong> (client <code>${escapeHtml(input.clientId)}</code>) asks to read, on your behalf and within your permissions:</p>
    <ul>
        ${scopeItems}
    </ul>
    <p>It can only read; it cannot change orders, stock or anything else.</p>
    <p class="where">If you allow it, your browser is sent back to <strong>${host}</strong> with a code that lets that app read your workspace. Continue only if you started this from that app and expect to return to ${host}.</p>
    ${error}
    <form method="post" action="${escapeHtml(input.action)}">
      <label for="signInCode">Sign-in code</label>
      <p id="signInCode-help"><small>A one-time code from the console of your workspace (it looks like <code>7KQ2-M9XD-4HTR</code> and is valid for 10 minutes); an administrator can also create one with <code>supply-api console sign-in-code</code>.</small></p>
      <input type="text" id="signInCode" name="signInCode" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required autofocus ${described}>
      <button type="submit" name="decision" value="allow">Sign in and allow</button>
      <button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
    </form>
  </body>
</html>
`;
}
