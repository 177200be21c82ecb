#!/usr/bin/python3
"""tests/web/browser.py URL TOKEN SCREENSHOT [CITIES] - the live view of a running
`tenbin bnb --web` in Debian's headless Chromium (selenium + chromedriver):
the page loads, the bounds change while we watch, the charts are drawn, a
screenshot is saved, the stop button (with its confirmation) ends the run
and the page says so.  Exit 0 on success, 1 with one line on failure, 77
(skipped) when Chromium or its driver is not installed."""
import os
import sys
import time

URL, TOKEN, SHOT = sys.argv[1], sys.argv[2], sys.argv[3]
CITIES = int(sys.argv[4]) if len(sys.argv) > 4 else 100 # the TSP's, drawn as circles
CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"


def fail(msg):
    print("FAIL: browser: " + msg, file=sys.stderr)
    sys.exit(1)


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    print("SKIP: python3-selenium is not installed (scripts/bootstrap installs it)", file=sys.stderr)
    sys.exit(77)
if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
    print("SKIP: chromium or chromium-driver is not installed (scripts/bootstrap installs them)",
          file=sys.stderr)
    sys.exit(77)

opts = webdriver.ChromeOptions()
opts.binary_location = CHROMIUM
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--window-size=1200,1300", "--no-first-run", "--disable-extensions"):
    opts.add_argument(a)
driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
try:
    driver.set_page_load_timeout(30)
    driver.get(URL + "#token=" + TOKEN)
    text = lambda i: driver.find_element(By.ID, i).text

    def wait(what, cond, seconds=20):
        end = time.time() + seconds
        while time.time() < end:
            try:
                v = cond()
                if v:
                    return v
            except Exception:
                pass
            time.sleep(0.1)
        fail("%s (status '%s', upper '%s', lower '%s')" % (what, text("status"), text("upper"),
                                                             text("lower")))

    wait("the page never showed a running search",
         lambda: text("status") == "running" and text("lower") not in ("", "-"))
    first = text("lower")
    wait("the lower bound did not change in 20 s (first %s)" % first,
         lambda: text("lower") not in ("", "-", first))
    paths = driver.find_elements(By.CSS_SELECTOR, "#bounds path")
    if len(paths) < 2:
        fail("the bounds chart has %d lines, want 2" % len(paths))
    if not driver.find_elements(By.CSS_SELECTOR, "#pend path"):
        fail("the pending chart is empty")
    rows = driver.find_elements(By.CSS_SELECTOR, "#groups tbody tr")
    if not rows:
        fail("no group rows")
    if "tour of length" not in text("inc"):
        fail("no incumbent tour shown: '%s'" % text("inc")[:100])
    if len(driver.find_elements(By.CSS_SELECTOR, "#tour circle")) != CITIES:
        fail("the tour is not drawn on the instance's %d cities" % CITIES)
    if not driver.find_elements(By.CSS_SELECTOR, "#tour polyline"):
        fail("the tour is not drawn")
    driver.save_screenshot(SHOT)
    driver.find_element(By.ID, "stop").click()
    alert = wait("no confirmation asked", lambda: driver.switch_to.alert)
    alert.accept()
    wait("the page did not show the end after the stop",
         lambda: text("status").startswith("ended: not proven"), 60)
    print("browser: bounds changed from %s to %s; stopped; screenshot %s" % (first, text("lower"),
                                                                            SHOT))
finally:
    driver.quit()
