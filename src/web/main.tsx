/** The application's entry: the styles, the router, and the first read of the session. */
import { render } from 'preact';
import './app.css';
import { App } from './app.tsx';
import { loadAccount } from './api.ts';

void loadAccount();
render(<App />, document.getElementById('app')!);
