/** The application's entry: the styles, the router, and the first read of the session. */
import { render } from 'preact';
import './app.css';
import './publish.css';
import { App } from './app.tsx';
import { loadAccount } from './api.ts';

// The screens that exchange a mailed token sign in by themselves: no need to ask who is signed in first.
if (!/^\/app\/(sign-in\/verify|invitations\/accept)\/?$/.test(location.pathname)) void loadAccount();
render(<App />, document.getElementById('app')!);
