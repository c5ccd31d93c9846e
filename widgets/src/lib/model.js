// The widget's side of its model: listening to traits, and telling the kernel the page is open.

/**
 * Listen to changes of the model's traits, one handler each; returns what stops listening.
 * @param {AnyModel} model
 * @param {Record<string, () => void>} handlers trait name -> what to do when it changes
 * @returns {() => void}
 */
export function listen(model, handlers) {
  /** @type {[string, () => void][]} */
  const events = Object.entries(handlers).map(([trait, handler]) => [`change:${trait}`, handler]);
  for (const [event, handler] of events) model.on(event, handler);
  return () => {
    for (const [event, handler] of events) model.off(event, handler);
  };
}

/**
 * While a widget waits for the user, the kernel hears {type: "alive"} from this page every
 * `beat` seconds (the model's trait): when every page showing the request is closed, it stops
 * waiting after AgentExt.page_gone_timeout. Returns what stops the beat (safe to call twice).
 * @param {AnyModel} model
 * @returns {() => void}
 */
export function heartbeat(model) {
  const seconds = Number(model.get("beat") ?? 0);
  if (!(seconds > 0)) return () => {};
  const timer = setInterval(() => model.send({ type: "alive" }), seconds * 1000);
  return () => clearInterval(timer);
}
