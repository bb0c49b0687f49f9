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
 * The sign-in page of `/authorize`: names the client and the scopes it asks for and has one text
 * field, `signInCode`. It posts to the URL it was served at (same query), loads nothing external,
 * and says nothing about any member.
 */
export function renderSignInPage(input: { clientName: string; scopes: readonly string[]; action: string; error?: string }): string {
  const scopeItems = input.scopes
    .map((scope) => `<li><code>${escapeHtml(scope)}</code> — ${escapeHtml(scopeDescriptions[scope] ?? scope)}</li>`)
    .join('\n        ');
  const error = input.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(input.error)}</p>`;
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
      input[type=text] { font: inherit; font-size: 1.2rem; letter-spacing: .1em; padding: .4rem; width: 100%; box-sizing: border-box; }
      button { font: inherit; margin-top: 1rem; padding: .5rem 1.2rem; }
      li { margin: .2rem 0; }
    </style>
  </head>
  <body>
    <h1>Sign in to let <strong>${escapeHtml(input.clientName)}</strong> read your workspace</h1>
    <p><strong>${escapeHtml(input.clientName)}</strong> asks to read, on your behalf and within your permissions:</p>
    <ul>
        ${scopeItems}
    </ul>
    <p>It can only read; it cannot change orders, stock or anything else.</p>
    ${error}
    <form method="post" action="${escapeHtml(input.action)}">
      <label for="signInCode">Sign-in code from the console</label>
      <input type="text" id="signInCode" name="signInCode" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required autofocus>
      <button type="submit">Sign in and allow</button>
    </form>
  </body>
</html>
`;
}
