import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { v1Operations } from '../../src/api/v1/operations.js';
import { issuableScopes } from '../../src/keys/scopes.js';
import { chromiumAvailable, launchChromium, type HeadlessChromium } from '../support/chromium.js';
import { services } from '../support/services.js';
import { startServedService, type ServedService } from '../support/servedService.js';

/**
 * `/docs` of the real `serve` (no PUBLIC_BASE_URL, as on a developer's machine) in Chromium, at
 * each loopback name it answers to: the page's requests must go to the origin it was loaded from,
 * which its Content-Security-Policy (`connect-src 'self'`) holds it to.
 */
describe.runIf(services.postgres && chromiumAvailable())('the reference page in a real browser', () => {
  let service: ServedService;
  let key: string;
  let browser: HeadlessChromium;
  beforeAll(async () => {
    [service, browser] = await Promise.all([startServedService(), launchChromium()]);
    const issued = await service.cliJson(['keys', 'issue', '--workspace', service.workspaceId, '--member', service.ownerId, '--scopes', issuableScopes.join(','), '--name', 'docs']);
    key = z.object({ key: z.string() }).parse(issued).key;
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  test.each(['127.0.0.1', 'localhost'])(
    'opened at %s: renders every operation from /openapi.json, loads nothing from another origin, links nowhere outside, and a "try it" request with the typed key answers 200',
    async (host) => {
      const origin = `http://${host}:${service.port}`;
      const page = await browser.context.newPage();
      const foreign: string[] = [];
      const problems: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(`${origin}/`) && !request.url().startsWith('data:') && !request.url().startsWith('blob:')) foreign.push(request.url());
      });
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('response', (response) => {
        if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
      });
      await page.goto(`${origin}/docs`);
      await page.getByText('List orders').first().waitFor({ timeout: 30_000 });
      const text = await page.locator('body').innerText();
      for (const operation of v1Operations) expect(text, operation.operationId).toContain(operation.summary);
      // No link or button leads to another site: links stay on this origin (or write to support).
      const hrefs = await page.$$eval('a[href]', (anchors) => anchors.map((anchor) => (anchor as unknown as { href: string }).href));
      expect(hrefs.length).toBeGreaterThan(0);
      expect(hrefs.filter((href) => !href.startsWith(`${origin}/`) && !href.startsWith('mailto:'))).toEqual([]);
      const formTargets = await page.$$eval('form[action]', (forms, own) => forms.map((form) => (form as unknown as { action: string }).action).filter((action) => !action.startsWith(own)), origin);
      expect(formTargets).toEqual([]);

      await page.getByRole('button', { name: /authorize/i }).first().click();
      await page.locator('.dialog-ux input[type="text"], .dialog-ux input[type="password"]').first().fill(key);
      await page.locator('.dialog-ux .auth-btn-wrapper button.authorize').first().click();
      await page.locator('.dialog-ux .auth-btn-wrapper button.btn-done').first().click();
      await page.getByText('Identity of the API key').first().click();
      await page.getByRole('button', { name: /try it out/i }).first().click();
      const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/me', { timeout: 30_000 });
      await page.getByRole('button', { name: /^execute$/i }).first().click();
      const response = await answered.catch((error: unknown) => {
        throw new Error(`no answer from /v1/me; the page reported: ${problems.join(' | ') || 'nothing'}; requests elsewhere: ${foreign.join(' ') || 'none'}`, { cause: error });
      });
      expect(response.url()).toBe(`${origin}/v1/me`);
      expect(response.status()).toBe(200);
      expect(response.request().headers().authorization).toBe(`Bearer ${key}`);
      await page.locator('.live-responses-table .response-col_status').filter({ hasText: '200' }).first().waitFor({ timeout: 10_000 });
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
      await page.close();
    },
  );
});
