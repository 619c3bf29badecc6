// The shell: who is signed in (account_me), the header nav (Apps, API keys, Settings, Admin for admins, Docs, Log out)
// and the hash routes.
// #/forgot, #/reset/<token> and #/verify/<token> work signed in or out (links from mail).
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { AlertBanner } from './AlertBanner.js';
import { api, isUnauthorized, type User } from './api.js';
import { href, navigate, useRoute } from './router.js';
import { AdminPage } from './pages/Admin.js';
import { AuthPage } from './pages/Auth.js';
import { AppsPage, CreateAppPage } from './pages/Apps.js';
import { AppDetailPage } from './pages/AppDetail.js';
import { KeyDetailPage, KeysPage, NewKeyPage } from './pages/Keys.js';
import { ForgotPage, ResetPage, VerifyPage } from './pages/Recovery.js';
import { SettingsPage, VerifyReminder } from './pages/Settings.js';

type Session = { state: 'loading' } | { state: 'out' } | { state: 'in'; user: User };

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session>({ state: 'loading' });
  const main = useRef<HTMLElement>(null);

  useEffect(() => {
    api.request('account_me').then(
      (user) => setSession({ state: 'in', user }),
      () => setSession({ state: 'out' }),
    );
  }, []);

  // A session that ended elsewhere (expired, logged out in another tab) sends the user to log in.
  const onUnauthorized = useCallback((e: unknown) => {
    if (isUnauthorized(e)) {
      setSession({ state: 'out' });
      navigate('login');
      return true;
    }
    return false;
  }, []);

  // Move focus to the page's heading on navigation, so keyboard and screen-reader users start at the new content
  // (not on a tab change inside a page: the focus stays on the tab).
  const path = route.slice(0, 2).join('/');
  // biome-ignore lint/correctness/useExhaustiveDependencies: the page and the session are the trigger (a new page was rendered), not values read
  useEffect(() => {
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [path, session.state]);

  const signedIn = (user: User) => {
    setSession({ state: 'in', user });
    navigate('apps');
  };
  const logOut = async () => {
    await api.request('account_logOut').catch(() => undefined);
    setSession({ state: 'out' });
    navigate('login');
  };

  const section = route[0] ?? '';
  let page: ReactNode;
  if (session.state === 'loading') page = <p className="muted">Loading…</p>;
  else if (section === 'reset' && route[1]) page = <ResetPage token={route[1]} />;
  else if (section === 'verify' && route[1]) page = <VerifyPage token={route[1]} signedIn={session.state === 'in'} />;
  else if (section === 'forgot' && session.state === 'out') page = <ForgotPage />;
  else if (session.state === 'out')
    page = (
      <AuthPage
        mode={section === 'signup' ? 'signup' : 'login'}
        invite={section === 'signup' ? route[1] : undefined}
        onSignedIn={signedIn}
      />
    );
  else if (section === 'keys') {
    page =
      route[1] === 'new' ? (
        <NewKeyPage onUnauthorized={onUnauthorized} />
      ) : route[1] ? (
        <KeyDetailPage keyId={route[1]} onUnauthorized={onUnauthorized} />
      ) : (
        <KeysPage onUnauthorized={onUnauthorized} />
      );
  } else if (section === 'admin' && session.user.admin)
    page = <AdminPage onUnauthorized={onUnauthorized} selfId={session.user.id} />;
  else if (section === 'settings')
    page = (
      <SettingsPage
        user={session.user}
        onUnauthorized={onUnauthorized}
        onDeleted={() => {
          setSession({ state: 'out' });
          navigate('signup');
        }}
      />
    );
  else if (section === 'apps' && route[1] === 'new') page = <CreateAppPage onUnauthorized={onUnauthorized} />;
  else if (section === 'apps' && route[1])
    page = <AppDetailPage appId={route[1]} tab={route[2] ?? 'setup'} onUnauthorized={onUnauthorized} />;
  else page = <AppsPage onUnauthorized={onUnauthorized} />;

  const current = (s: string) => (section === s || (s === 'apps' && section === '') ? 'page' : undefined);
  return (
    <>
      {/* A button, not a link: the hash is the router's, so "#main" would navigate away instead of skipping. */}
      <button
        type="button"
        className="skip-link"
        onClick={() => main.current?.querySelector<HTMLElement>('h1')?.focus()}
      >
        Skip to content
      </button>
      <header className="site-header">
        <div className="header-inner">
          <a className="brand" href={session.state === 'in' ? href('apps') : href('login')}>
            <span className="brand-mark" aria-hidden="true">
              ◆
            </span>{' '}
            rpcgate
          </a>
          <nav aria-label="Main">
            <ul className="nav">
              {session.state === 'in' && (
                <>
                  <li>
                    <a href={href('apps')} aria-current={current('apps')}>
                      Apps
                    </a>
                  </li>
                  <li>
                    <a href={href('keys')} aria-current={current('keys')}>
                      API keys
                    </a>
                  </li>
                  <li>
                    <a href={href('settings')} aria-current={current('settings')}>
                      Settings
                    </a>
                  </li>
                  {session.user.admin && (
                    <li>
                      <a href={href('admin')} aria-current={current('admin')}>
                        Admin
                      </a>
                    </li>
                  )}
                </>
              )}
              <li>
                <a href="/docs/">Docs</a>
              </li>
              {session.state === 'in' ? (
                <li className="nav-user">
                  <span className="muted user-email" title={session.user.email}>
                    {session.user.email}
                  </span>
                  <button type="button" className="btn btn-small" onClick={logOut}>
                    Log out
                  </button>
                </li>
              ) : session.state === 'out' ? (
                <>
                  <li>
                    <a href={href('login')} aria-current={section !== 'signup' ? 'page' : undefined}>
                      Log in
                    </a>
                  </li>
                  <li>
                    <a href={href('signup')} aria-current={section === 'signup' ? 'page' : undefined}>
                      Sign up
                    </a>
                  </li>
                </>
              ) : null}
            </ul>
          </nav>
        </div>
      </header>
      <main id="main" ref={main} className="container">
        {session.state === 'in' && !session.user.emailVerified && section !== 'settings' && section !== 'verify' && (
          <VerifyReminder fail={onUnauthorized} />
        )}
        {session.state === 'in' && <AlertBanner refreshKey={path} />}
        {page}
      </main>
      <footer className="site-footer container">
        <span className="muted">rpcgate — JSON-RPC access to EVM nodes.</span> <a href="/docs/">API reference</a>
      </footer>
    </>
  );
}
