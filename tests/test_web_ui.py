"""The web UI end to end in Debian's headless Chromium (Selenium) against a real server started here:
API-key login, streamed answer with the agent's steps, clickable citations that open the highlighted
lines, the KB/chat toggle."""

from __future__ import annotations

import shutil
import socket
import threading
import time

import pytest
import uvicorn

from conftest import HashEmbedder, write
from kb_agent.engine import Engine
from kb_agent.interfaces.auth import Authenticator
from kb_agent.interfaces.server import create_app

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="Debian chromium/chromium-driver not installed"),
]


@pytest.fixture
def server(settings, tmp_path):
    root = tmp_path / "corp"
    write(root / "handbook.md", "# Handbook\nWelcome.\nThe office opens at nine.\nLunch is at noon.\n")
    (tmp_path / "keys.yaml").write_text("keys:\n  - {key: ui-key, user: local}\n")
    engine = Engine(settings.model_copy(update={"llm_provider": "none"}), embedder=HashEmbedder())
    engine.index([root])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        create_app(engine, Authenticator(tmp_path / "keys.yaml", None)),
        host="127.0.0.1",
        port=port,
        log_level="warning",
    )
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    for _ in range(100):
        if instance.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=5)
    engine.close()


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def test_login_ask_stream_and_open_a_citation(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 20)
    browser.get(server + "/")
    wait.until(ec.visibility_of_element_located((By.ID, "login")))
    browser.find_element(By.ID, "key").send_keys("wrong")
    browser.find_element(By.ID, "login-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "login-error"), "not accepted"))
    browser.find_element(By.ID, "key").clear()
    browser.find_element(By.ID, "key").send_keys("ui-key")
    browser.find_element(By.ID, "login-btn").click()
    wait.until(ec.visibility_of_element_located((By.ID, "app")))

    browser.find_element(By.ID, "question").send_keys("When does the office open?\n")
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".refs .cite")))
    assert "nine" in browser.find_element(By.CSS_SELECTOR, ".msg.answer").text
    assert "🔍 Searching" in browser.find_element(By.CSS_SELECTOR, ".steps").text

    browser.find_element(By.CSS_SELECTOR, ".refs .cite").click()
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#source .hl")))
    highlighted = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#source .hl")]
    assert any("The office opens at nine." in line for line in highlighted)
    assert "corp/handbook.md:L" in browser.find_element(By.CSS_SELECTOR, "#source h3").text

    browser.find_element(By.ID, "mode").click()
    assert browser.find_element(By.ID, "mode-label").text == "Chat mode"
    browser.find_element(By.ID, "question").send_keys("hello there\n")
    wait.until(lambda d: "needs a generative model" in d.find_elements(By.CSS_SELECTOR, ".msg.answer")[-1].text)
